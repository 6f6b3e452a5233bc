//! The campaign's chart (`docs/faults-recovery.svg`): one bar per driver
//! and configuration, its trials by outcome, drawn from the reports
//! `cargo xtask faults` wrote (`target/faults/DRIVER-seedS-FxN.txt`):
//! `cargo xtask faults chart OUT.svg REPORT...`.

use super::classify::CLASSES;
use std::fmt::Write as _;

/// Each outcome's colour, in `CLASSES`' order.
const COLOURS: [&str; 7] = ["#9e9e9e", "#2e7d32", "#f9a825", "#ef6c00", "#6a1b9a", "#c62828", "#4e342e"];
/// Where the bars start and how wide they may grow (pixels).
const LEFT: f64 = 200.0;
const WIDTH: f64 = 520.0;
/// A bar's height and the distance from one bar to the next.
const BAR: usize = 34;
const ROW: usize = 60;

/// One bar: its label and the trials of each outcome.
struct Bar {
    label: String,
    counts: [usize; 7],
}

/// The two bars of one report (native, isolated) and its title line.
fn bars(report: &str) -> Result<(String, [Bar; 2]), String> {
    let title = report.lines().find(|l| !l.trim().is_empty()).ok_or("an empty report")?;
    let driver = title.split(':').next().unwrap_or("").to_string();
    let mut counts = [[0; 7]; 2];
    for (k, class) in CLASSES.iter().enumerate() {
        let line = report
            .lines()
            .find(|l| l.starts_with(class.name()))
            .ok_or(format!("{driver}: no line for {}", class.name()))?;
        let n: Vec<usize> =
            line[class.name().len()..].split_whitespace().filter_map(|w| w.parse().ok()).collect();
        let [native, isolated] = n[..] else { return Err(format!("{driver}: a bad line: {line}")) };
        (counts[0][k], counts[1][k]) = (native, isolated);
    }
    let bar = |c: usize, what: &str| Bar { label: format!("{driver} {what}"), counts: counts[c] };
    Ok((title.to_string(), [bar(0, "native"), bar(1, "isolated")]))
}

/// The chart of `bars`, titled `title`.
fn svg(title: &str, bars: &[Bar]) -> String {
    let legend_y = 50 + ROW * bars.len() + 10;
    let height = legend_y + 50;
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="760" height="{height}" font-family="sans-serif" font-size="13">"#
    );
    let _ = writeln!(s, r#"<rect width="760" height="{height}" fill="white"/>"#);
    let _ = writeln!(s, r#"<text x="380" y="24" text-anchor="middle" font-size="15">{title}</text>"#);
    for (r, b) in bars.iter().enumerate() {
        let (y, total) = (50 + ROW * r, b.counts.iter().sum::<usize>().max(1));
        let _ = writeln!(s, r#"<text x="190" y="{}" text-anchor="end">{}</text>"#, y + 22, b.label);
        let mut x = LEFT;
        for (k, &n) in b.counts.iter().enumerate().filter(|c| *c.1 > 0) {
            let w = WIDTH * n as f64 / total as f64;
            let _ = writeln!(
                s,
                r#"<rect x="{x:.1}" y="{y}" width="{w:.1}" height="{BAR}" fill="{}"><title>{}: {n}</title></rect>"#,
                COLOURS[k],
                CLASSES[k].name()
            );
            if w >= 30.0 {
                let _ = writeln!(
                    s,
                    r#"<text x="{:.1}" y="{}" text-anchor="middle" fill="white">{n}</text>"#,
                    x + w / 2.0,
                    y + 22
                );
            }
            x += w;
        }
        let _ = writeln!(s, r#"<text x="728" y="{}">{total}</text>"#, y + 22);
    }
    let mut x = 20.0;
    for (k, class) in CLASSES.iter().enumerate() {
        let name = class.name();
        let _ = writeln!(
            s,
            r#"<rect x="{x:.0}" y="{legend_y}" width="14" height="14" fill="{}"/><text x="{:.0}" y="{}">{name}</text>"#,
            COLOURS[k],
            x + 18.0,
            legend_y + 12
        );
        x += 40.0 + 7.5 * name.len() as f64;
    }
    s.push_str("</svg>\n");
    s
}

/// `cargo xtask faults chart OUT.svg REPORT...`.
pub fn main(args: &[String]) -> Result<(), String> {
    let [out, reports @ ..] = args else {
        return Err("usage: cargo xtask faults chart OUT.svg REPORT...".into());
    };
    let mut all = Vec::new();
    let mut titles = Vec::new();
    for path in reports {
        let text = std::fs::read_to_string(path).map_err(|e| format!("reading {path}: {e}"))?;
        let (title, two) = bars(&text)?;
        titles.push(title);
        all.extend(two);
    }
    let title = titles.first().ok_or("no reports given")?;
    // "virtio-blk: 400 trials from 0 (seed 1), 5 faults each, ...; isolated
    // with recover=restart": the trials and the isolated configuration.
    let trials = title.split_once(": ").map_or("", |t| t.1).split(", ").next().unwrap_or("");
    let isolated = title.rsplit_once("; ").map_or("", |t| t.1);
    let title = format!("cargo xtask faults: {trials} per driver; {isolated}");
    std::fs::write(out, svg(&title, &all)).map_err(|e| format!("{out}: {e}"))?;
    println!("xtask: wrote {out}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "\nvirtio-blk: 400 trials from 0 (seed 1), 5 faults each, the 8 types in turn; isolated with recover=restart
outcome                  native  isolated
no visible effect             7         7
recovered                     0       392
workload error              393         1
workload hang                 0         0
data lost/corrupted           0         0
kernel crash                  0         0
kernel hang                   0         0
";

    #[test]
    fn a_reports_table_becomes_two_bars_of_its_counts() {
        let (title, [native, isolated]) = bars(REPORT).unwrap();
        assert!(title.starts_with("virtio-blk: 400 trials"));
        assert_eq!((native.label.as_str(), native.counts), ("virtio-blk native", [7, 0, 393, 0, 0, 0, 0]));
        assert_eq!(isolated.counts, [7, 392, 1, 0, 0, 0, 0]);
        let s = svg("t", &[native, isolated]);
        assert!(
            s.contains("<title>recovered: 392</title>") && s.contains("<title>workload error: 1</title>")
        );
        assert!(!s.contains("kernel crash: 0"), "an empty outcome was drawn");
        assert!(bars(&REPORT.replace("recovered                     0       392\n", "")).is_err());
    }
}
