//! The results: a table on the terminal, JSON in `bench/results/`, and for a
//! full run a Markdown table in `docs/benchmarks.md` with an SVG chart.

use super::rows::Row;
use super::{linux, Figure, Options, Side};
use crate::build::root;
use std::fmt::Write;
use std::process::Command;

/// The generated part of `docs/benchmarks.md` lies between these markers;
/// the rest of the page is prose that runs leave alone.
const BEGIN: &str = "<!-- bench:results:begin -->";
const END: &str = "<!-- bench:results:end -->";
const CHART: &str = "bench/results/ratios.svg";

struct Line<'a> {
    row: &'a Row,
    linux: Option<Figure>,
    veneer: Option<Figure>,
}

impl Line<'_> {
    fn ratio(&self) -> Option<f64> {
        Some(self.linux?.median / self.veneer?.median)
    }

    fn met(&self) -> Option<bool> {
        Some(self.ratio()? >= self.row.target?)
    }

    /// The cells shared by the terminal and Markdown tables.
    fn cells(&self, veneer_missing: &str) -> Vec<String> {
        let side = |name: Option<&str>, fig: Option<Figure>, missing: &str| match (name, fig) {
            (None, _) => "—".to_string(),
            (Some(_), None) => missing.to_string(),
            (Some(_), Some(f)) => format!(
                "{} ({}–{}, {}×{})",
                number(f.median),
                number(f.min),
                number(f.max),
                f.trials,
                f.iterations
            ),
        };
        let reference = match (self.row.reference, self.linux) {
            (Some(r), Some(f)) => format!("{} ({:+.1}%)", number(r), (f.median / r - 1.0) * 100.0),
            (Some(r), None) => number(r),
            (None, _) => "—".into(),
        };
        vec![
            self.row.title.into(),
            self.row.paper.into(),
            side(self.row.linux, self.linux, "missing"),
            reference,
            side(self.row.veneer, self.veneer, veneer_missing),
            self.ratio().map_or("—".into(), |r| format!("{r:.2}×")),
            self.row.target.map_or("—".into(), |t| format!("≥{t}×")),
            match self.met() {
                Some(true) => "yes".into(),
                Some(false) => "no".into(),
                None => "—".into(),
            },
        ]
    }
}

const HEADER: [&str; 8] = [
    "benchmark",
    "paper",
    "Linux (min–max, trials×iterations)",
    "Linux reference",
    "Veneer",
    "ratio",
    "target",
    "met",
];

pub struct Results<'a> {
    opts: &'a Options,
    lines: Vec<Line<'a>>,
    /// What a missing Veneer figure is called: why the side has none.
    veneer_missing: String,
    veneer_problem: Option<String>,
    linux_problem: Option<String>,
    kernel: String,
    qemu: String,
    command: String,
    unit: &'static str,
}

impl<'a> Results<'a> {
    pub fn new(opts: &'a Options, rows: &[&'a Row], linux: &Side, veneer: &Side) -> Self {
        let lines = rows
            .iter()
            .map(|&row| Line {
                row,
                linux: row.linux.and_then(|n| linux.figure(n)),
                veneer: row.veneer.and_then(|n| veneer.figure(n)),
            })
            .collect();
        let mut command = String::from("cargo xtask bench");
        for name in &opts.names {
            command.push(' ');
            command.push_str(name);
        }
        if opts.quick {
            command.push_str(" --quick");
        }
        if opts.kvm {
            command.push_str(" --kvm");
        }
        let qemu = Command::new("qemu-system-x86_64")
            .arg("--version")
            .output()
            .ok()
            .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().next().map(str::to_string))
            .unwrap_or_else(|| "unknown QEMU".into());
        Results {
            opts,
            lines,
            veneer_missing: "not yet".into(),
            veneer_problem: veneer.problem.clone(),
            linux_problem: linux.problem.clone(),
            kernel: linux::kernel_version(&root().join("target/bench/linux")),
            qemu,
            command,
            unit: if opts.kvm {
                "TSC cycles per operation (KVM, wall clock)"
            } else {
                "guest instructions per operation (QEMU -icount shift=0)"
            },
        }
    }

    /// The within-side comparisons (`rows::WITHIN`) whose rows ran.
    fn within(&self) -> Vec<String> {
        let find = |name: &str| self.lines.iter().find(|l| l.row.name == name);
        let ratio = |a: Option<Figure>, b: Option<Figure>| Some(a?.median / b?.median);
        let show = |r: Option<f64>| r.map_or("—".to_string(), |r| format!("{r:.2}×"));
        super::rows::WITHIN
            .iter()
            .filter_map(|w| {
                let (a, b) = (find(w.a)?, find(w.b)?);
                let veneer = ratio(a.veneer, b.veneer);
                let met = veneer.map_or("—", |v| if v <= w.veneer_max { "yes" } else { "no" });
                Some(format!(
                    "{}: Linux {}, Veneer {} (target: Veneer ≤{}×; met: {met})",
                    w.title,
                    show(ratio(a.linux, b.linux)),
                    show(veneer),
                    w.veneer_max
                ))
            })
            .collect()
    }

    fn table(&self) -> Vec<Vec<String>> {
        self.lines.iter().map(|l| l.cells(&self.veneer_missing)).collect()
    }

    pub fn print(&self) {
        let table = self.table();
        let mut widths: Vec<usize> = HEADER.iter().map(|h| h.chars().count()).collect();
        for row in &table {
            for (w, cell) in widths.iter_mut().zip(row) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, &w)| format!("{c:<w$}")).collect();
            println!("{}", padded.join("  ").trim_end());
        };
        println!("\n{} — {}", self.command, self.unit);
        line(&HEADER.map(String::from));
        for row in &table {
            line(row);
        }
        for w in self.within() {
            println!("{w}");
        }
        for (side, problem) in [("Linux", &self.linux_problem), ("Veneer", &self.veneer_problem)] {
            if let Some(p) = problem {
                println!("{side}: {p}");
            }
        }
        println!();
    }

    /// Writes the JSON; a full instruction-count run also updates the docs.
    pub fn save(&self) -> Result<(), String> {
        let results = root().join("bench/results");
        let file = if self.opts.quick {
            // A smoke run's numbers are not results.
            root().join("target/bench/quick.json")
        } else if self.opts.kvm {
            results.join("kvm.json")
        } else if !self.opts.names.is_empty() {
            results.join(format!("{}.json", self.opts.names.join("-")))
        } else {
            results.join("latest.json")
        };
        write(&file, &self.json())?;
        println!("xtask: bench: wrote {}", file.display());
        if !self.opts.quick && !self.opts.kvm && self.opts.names.is_empty() {
            write(&root().join(CHART), &self.svg())?;
            self.update_docs()?;
            println!("xtask: bench: updated docs/benchmarks.md and {CHART}");
        }
        Ok(())
    }

    fn json(&self) -> String {
        let figure = |f: Option<Figure>| match f {
            None => "null".to_string(),
            Some(f) => format!(
                "{{\"median\": {:.1}, \"min\": {:.1}, \"max\": {:.1}, \"iterations\": {}, \"trials\": {}}}",
                f.median, f.min, f.max, f.iterations, f.trials
            ),
        };
        let opt = |v: Option<f64>| v.map_or("null".into(), |v| format!("{v:.3}"));
        let text = |v: Option<&str>| v.map_or("null".into(), quote);
        let mut out = String::from("{\n");
        let _ = writeln!(out, "  \"command\": {},", quote(&self.command));
        let _ = writeln!(out, "  \"unit\": {},", quote(self.unit));
        let _ = writeln!(out, "  \"qemu\": {},", quote(&self.qemu));
        let _ = writeln!(out, "  \"linux_kernel\": {},", quote(&self.kernel));
        let _ = writeln!(out, "  \"linux_problem\": {},", text(self.linux_problem.as_deref()));
        let _ = writeln!(out, "  \"veneer_problem\": {},", text(self.veneer_problem.as_deref()));
        out.push_str("  \"rows\": [\n");
        for (i, l) in self.lines.iter().enumerate() {
            let r = l.row;
            let _ = write!(
                out,
                "    {{\"name\": {}, \"title\": {}, \"paper\": {}, \"linux_name\": {}, \
                 \"veneer_name\": {}, \"pairing\": {}, \"reference\": {}, \"target\": {}, \
                 \"linux\": {}, \"veneer\": {}, \"ratio\": {}, \"met\": {}}}",
                quote(r.name),
                quote(r.title),
                quote(r.paper),
                text(r.linux),
                text(r.veneer),
                quote(r.pairing),
                opt(r.reference),
                opt(r.target),
                figure(l.linux),
                figure(l.veneer),
                opt(l.ratio()),
                l.met().map_or("null".into(), |m| m.to_string()),
            );
            out.push_str(if i + 1 < self.lines.len() { ",\n" } else { "\n" });
        }
        out.push_str("  ]\n}\n");
        out
    }

    fn markdown(&self) -> String {
        let mut md = String::new();
        let date = Command::new("date")
            .args(["-u", "+%Y-%m-%d %H:%M UTC"])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_default();
        let _ = writeln!(
            md,
            "Generated by `{}` on {date} with {}; Linux is Debian's `{}`. \
             Figures are {}: median (min–max, trials×iterations). \
             Ratio = Linux / Veneer.\n",
            self.command, self.qemu, self.kernel, self.unit
        );
        let _ = writeln!(md, "| {} | pairing |", HEADER.join(" | "));
        let _ = writeln!(md, "|{}", "---|".repeat(HEADER.len() + 1));
        for (cells, line) in self.table().iter().zip(&self.lines) {
            let _ = writeln!(md, "| {} | {} |", cells.join(" | "), line.row.pairing);
        }
        for w in self.within() {
            let _ = writeln!(md, "\n{w}");
        }
        if let Some(p) = &self.veneer_problem {
            let _ = writeln!(md, "\nVeneer: {p}.");
        }
        let _ = writeln!(md, "\n![Linux / Veneer, log scale](../{CHART})");
        md
    }

    fn update_docs(&self) -> Result<(), String> {
        let path = root().join("docs/benchmarks.md");
        let old = std::fs::read_to_string(&path).unwrap_or_default();
        let generated = format!("{BEGIN}\n{}{END}", self.markdown());
        let new = match (old.find(BEGIN), old.find(END)) {
            (Some(b), Some(e)) if b < e => {
                format!("{}{generated}{}", &old[..b], &old[e + END.len()..])
            }
            _ => format!("{old}\n## Results\n\n{generated}\n"),
        };
        write(&path, &new)
    }

    /// A horizontal bar per row: log10(ratio) from 1×, the target as a tick.
    fn svg(&self) -> String {
        const LABEL: f64 = 300.0;
        const PLOT: f64 = 440.0;
        const ROW: f64 = 22.0;
        const TOP: f64 = 30.0;
        // The axis spans 0.1× to 1000×.
        let x = |ratio: f64| LABEL + (ratio.log10().clamp(-1.0, 3.0) + 1.0) / 4.0 * PLOT;
        let height = TOP + ROW * self.lines.len() as f64 + 10.0;
        let width = LABEL + PLOT + 60.0;
        let mut s = format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
             font-family=\"sans-serif\" font-size=\"12\">\n\
             <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
             <text x=\"8\" y=\"16\">Linux / Veneer, log scale; red: target</text>\n"
        );
        for tick in [0.1, 1.0, 10.0, 100.0, 1000.0] {
            let tx = x(tick);
            let _ = writeln!(
                s,
                "<line x1=\"{tx:.1}\" y1=\"{:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\" stroke=\"#ccc\"/>\
                 <text x=\"{tx:.1}\" y=\"16\" text-anchor=\"middle\">{tick}×</text>",
                TOP - 8.0,
                height - 10.0
            );
        }
        for (i, l) in self.lines.iter().enumerate() {
            let y = TOP + ROW * i as f64;
            let _ = writeln!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
                LABEL - 8.0,
                y + 14.0,
                escape(l.row.title)
            );
            match l.ratio() {
                Some(r) => {
                    let (a, b) = (x(1.0).min(x(r)), x(1.0).max(x(r)));
                    let colour = match l.met() {
                        Some(false) => "#e08a2c",
                        _ => "#3a7d44",
                    };
                    let _ = writeln!(
                        s,
                        "<rect x=\"{a:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"14\" fill=\"{colour}\"/>\
                         <text x=\"{:.1}\" y=\"{:.1}\">{r:.1}×</text>",
                        y + 3.0,
                        (b - a).max(1.0),
                        b + 4.0,
                        y + 14.0
                    );
                }
                None => {
                    let _ = writeln!(
                        s,
                        "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#888\">{}</text>",
                        x(1.0) + 4.0,
                        y + 14.0,
                        if l.row.veneer.is_some() { "not yet" } else { "Linux only" }
                    );
                }
            }
            if let Some(t) = l.row.target {
                let tx = x(t);
                let _ = writeln!(
                    s,
                    "<line x1=\"{tx:.1}\" y1=\"{:.1}\" x2=\"{tx:.1}\" y2=\"{:.1}\" \
                     stroke=\"#c00\" stroke-width=\"2\"/>",
                    y + 1.0,
                    y + 19.0
                );
            }
        }
        s.push_str("</svg>\n");
        s
    }
}

/// Figures are instruction counts: whole numbers with thousands separators
/// unless small.
fn number(v: f64) -> String {
    if v < 100.0 {
        return format!("{v:.1}");
    }
    let digits = format!("{:.0}", v);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

fn write(path: &std::path::Path, text: &str) -> Result<(), String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("writing {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chart_and_json_show_ratios() {
        let opts = Options { quick: false, kvm: false, names: Vec::new() };
        let rows: Vec<&Row> = super::super::rows::ROWS.iter().collect();
        let linux = Side::parse("BENCH getpid 10 3080\nBENCH fork 10 2500000\n");
        let veneer = Side::parse("BENCH null_syscall 10 300\nBENCH fork 10 2000000\n");
        let results = Results::new(&opts, &rows, &linux, &veneer);
        let svg = results.svg();
        assert!(svg.contains("10.3×") && svg.contains("1.2×") && svg.contains("not yet"));
        if let Ok(path) = std::env::var("BENCH_SVG_OUT") {
            std::fs::write(path, &svg).unwrap();
        }
        let json = results.json();
        assert!(json.contains("\"ratio\": 10.267") && json.contains("\"met\": false"));
    }
}
