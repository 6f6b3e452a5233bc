//! The results: a table on the terminal, JSON in `bench/results/`, and for a
//! full run a Markdown table in `docs/benchmarks.md` with an SVG chart.

use super::rows::Row;
#[cfg(test)]
use super::Side;
use super::{linux, Clock, Figure, Options, Run};
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

    fn reference(&self) -> String {
        match (self.row.reference, self.linux) {
            (Some(r), Some(f)) => format!("{} ({:+.1}%)", number(r), (f.median / r - 1.0) * 100.0),
            (Some(r), None) => number(r),
            (None, _) => "—".into(),
        }
    }

    fn ratio_cell(&self) -> String {
        self.ratio().map_or("—".into(), |r| format!("{r:.2}×"))
    }
}

/// A figure with its spread: median (min–max, trials×iterations).
fn side(name: Option<&str>, fig: Option<Figure>) -> String {
    match (name, fig) {
        (None, _) => "—".to_string(),
        (Some(_), None) => "missing".to_string(),
        (Some(_), Some(f)) => {
            format!(
                "{} ({}–{}, {}×{})",
                number(f.median),
                number(f.min),
                number(f.max),
                f.trials,
                f.iterations
            )
        }
    }
}

/// The main table (the fair clock): what each side does and how it
/// compares with the target.
const HEADER: [&str; 7] =
    ["benchmark", "paper", "Linux (min–max, trials×iterations)", "Veneer", "ratio", "target", "met"];

fn main_cells(l: &Line) -> Vec<String> {
    vec![
        l.row.title.into(),
        l.row.paper.into(),
        side(l.row.linux, l.linux),
        side(l.row.veneer, l.veneer),
        l.ratio_cell(),
        l.row.target.map_or("—".into(), |t| format!("≥{t}×")),
        match l.met() {
            Some(true) => "yes".into(),
            Some(false) => "no".into(),
            None => "—".into(),
        },
    ]
}

/// The sensitivity table (the ERMS clock), beside the fair ratio; the
/// references were measured this way.
const SENSITIVITY_HEADER: [&str; 6] =
    ["benchmark", "Linux, ERMS", "Linux reference", "Veneer, ERMS", "ratio, ERMS", "ratio, fair clock"];

fn sensitivity_cells(erms: &Line, fair: &Line) -> Vec<String> {
    vec![
        erms.row.title.into(),
        side(erms.row.linux, erms.linux),
        erms.reference(),
        side(erms.row.veneer, erms.veneer),
        erms.ratio_cell(),
        fair.ratio_cell(),
    ]
}

pub struct Results<'a> {
    opts: &'a Options,
    /// One table per clock, the fair one first.
    tables: Vec<(Clock, Vec<Line<'a>>)>,
    kernel: String,
    qemu: String,
    command: String,
    unit: &'static str,
}

impl<'a> Results<'a> {
    pub fn new(opts: &'a Options, rows: &[&'a Row], runs: &[Run]) -> Self {
        let tables = runs
            .iter()
            .map(|run| {
                let lines = rows
                    .iter()
                    .map(|&row| Line {
                        row,
                        linux: row.linux.and_then(|n| run.linux.figure(n)),
                        veneer: row.veneer.and_then(|n| run.veneer.figure(n)),
                    })
                    .collect();
                (run.clock, lines)
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
            tables,
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

    fn fair(&self) -> &[Line<'a>] {
        &self.tables[0].1
    }

    /// The ERMS clock's lines, if this run measured it.
    fn erms(&self) -> Option<&[Line<'a>]> {
        self.tables.iter().find(|(c, _)| *c == Clock::Erms).map(|(_, l)| &l[..])
    }

    /// The within-side comparisons (`rows::WITHIN`) whose rows ran, under
    /// each clock.
    fn within(&self) -> Vec<String> {
        let ratio = |a: Option<Figure>, b: Option<Figure>| Some(a?.median / b?.median);
        let show = |r: Option<f64>| r.map_or("—".to_string(), |r| format!("{r:.2}×"));
        let mut out = Vec::new();
        for w in super::rows::WITHIN {
            for (clock, lines) in &self.tables {
                let find = |name: &str| lines.iter().find(|l| l.row.name == name);
                let (Some(a), Some(b)) = (find(w.a), find(w.b)) else {
                    continue;
                };
                let veneer = ratio(a.veneer, b.veneer);
                let met = veneer.map_or("—", |v| if v <= w.veneer_max { "yes" } else { "no" });
                out.push(format!(
                    "{} ({} clock): Linux {}, Veneer {} (target: Veneer ≤{:.2}×; met: {met})",
                    w.title,
                    clock.name(),
                    show(ratio(a.linux, b.linux)),
                    show(veneer),
                    w.veneer_max
                ));
            }
        }
        out
    }

    fn main_table(&self) -> Vec<Vec<String>> {
        self.fair().iter().map(main_cells).collect()
    }

    fn sensitivity_table(&self) -> Option<Vec<Vec<String>>> {
        let erms = self.erms()?;
        Some(erms.iter().zip(self.fair()).map(|(e, f)| sensitivity_cells(e, f)).collect())
    }

    pub fn print(&self) {
        println!("\n{} — {}", self.command, self.unit);
        println!("Fair clock (-cpu {}):", Clock::Fair.cpu());
        print_table(&HEADER, &self.main_table());
        if let Some(t) = self.sensitivity_table() {
            println!("\nSensitivity: ERMS advertised (-cpu {}):", Clock::Erms.cpu());
            print_table(&SENSITIVITY_HEADER, &t);
        }
        for w in self.within() {
            println!("{w}");
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
        out.push_str("  \"clocks\": [\n");
        for (t, (clock, lines)) in self.tables.iter().enumerate() {
            let _ = writeln!(
                out,
                "   {{\"clock\": {}, \"cpu\": {}, \"rows\": [",
                quote(clock.name()),
                quote(clock.cpu())
            );
            for (i, l) in lines.iter().enumerate() {
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
                out.push_str(if i + 1 < lines.len() { ",\n" } else { "\n" });
            }
            out.push_str(if t + 1 < self.tables.len() { "   ]},\n" } else { "   ]}\n" });
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
             Ratio = Linux / Veneer. The run passed every check of \"When a run passes\" above.\n",
            self.command, self.qemu, self.kernel, self.unit
        );
        let _ = writeln!(md, "### Fair clock: both sides on `-cpu {}`\n", Clock::Fair.cpu());
        let mut header = HEADER.to_vec();
        header.push("pairing");
        let table: Vec<Vec<String>> = self
            .main_table()
            .into_iter()
            .zip(self.fair())
            .map(|(mut cells, l)| {
                cells.push(l.row.pairing.into());
                cells
            })
            .collect();
        markdown_table(&mut md, &header, &table);
        for w in self.within().iter().filter(|w| w.contains("(fair clock)")) {
            let _ = writeln!(md, "\n{w}");
        }
        let _ = writeln!(md, "\n![Linux / Veneer under the fair clock, log scale](../{CHART})");
        if let Some(t) = self.sensitivity_table() {
            let _ = writeln!(
                md,
                "\n### Sensitivity: both sides on `-cpu {}` (ERMS advertised)\n\n\
                 Linux copies and clears with `rep movsb`/`rep stosb` here, one count per byte. \
                 The Linux reference (issue 6) was measured this way.\n",
                Clock::Erms.cpu()
            );
            markdown_table(&mut md, &SENSITIVITY_HEADER, &t);
            for w in self.within().iter().filter(|w| w.contains("(erms clock)")) {
                let _ = writeln!(md, "\n{w}");
            }
        }
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
        let lines = self.fair();
        let height = TOP + ROW * lines.len() as f64 + 10.0;
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
        for (i, l) in lines.iter().enumerate() {
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
                        if l.row.linux.is_none() { "Veneer only" } else { "Linux only" }
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

fn print_table(header: &[&str], table: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in table {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[String]| {
        let padded: Vec<String> = cells.iter().zip(&widths).map(|(c, &w)| format!("{c:<w$}")).collect();
        println!("{}", padded.join("  ").trim_end());
    };
    line(&header.iter().map(|h| h.to_string()).collect::<Vec<_>>());
    for row in table {
        line(row);
    }
}

fn markdown_table(md: &mut String, header: &[&str], table: &[Vec<String>]) {
    let _ = writeln!(md, "| {} |", header.join(" | "));
    let _ = writeln!(md, "|{}", "---|".repeat(header.len()));
    for cells in table {
        let _ = writeln!(md, "| {} |", cells.join(" | "));
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
        let run = |clock, linux_fork| Run {
            clock,
            linux: Side::parse(&format!("BENCH getpid 10 3080\nBENCH fork 10 {linux_fork}\n")),
            veneer_boots: Vec::new(),
            veneer: Side::parse("BENCH null_syscall 10 300\nBENCH fork 10 2000000\n"),
        };
        let runs = [run(Clock::Fair, 2500000), run(Clock::Erms, 3000000)];
        let results = Results::new(&opts, &rows, &runs);
        let svg = results.svg();
        assert!(svg.contains("10.3×") && svg.contains("1.2×") && svg.contains("Linux only"));
        if let Ok(path) = std::env::var("BENCH_SVG_OUT") {
            std::fs::write(path, &svg).unwrap();
        }
        let json = results.json();
        assert!(json.contains("\"ratio\": 10.267") && json.contains("\"met\": false"));
        // Both clocks are in the JSON and the page: fork reads 1.25x fair, 1.50x with ERMS.
        assert!(json.contains("\"clock\": \"fair\"") && json.contains("\"clock\": \"erms\""));
        let md = results.markdown();
        assert!(md.contains("Sensitivity") && md.contains("| 1.50× | 1.25× |"), "{md}");
    }
}
