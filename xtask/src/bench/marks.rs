//! The storage rows' figures (`libos/tests/c/iobench.c`): guest
//! instructions executed between two markers, counted by the profile's
//! plugin (`bench/profile/insn_count.c`, `marks=FILE`). The time-stamp
//! counter under `-icount sleep=off` also advances while a guest waits,
//! halted, for its disk (QEMU moves the clock on to the next timer), and
//! those jumps, not work, would be the figure. Each `BENCH` line of a row
//! here replaces its total with the instructions between its trial's two
//! markers; the boots that run them take the plugin (`args`). The
//! I/O-intensive workload's phases are counted so too, and its row
//! (`tree::TOTAL`) is their sum, trial by trial.

use super::{tree, Side};
use std::path::Path;

/// The rows counted this way (both sides run them with the plugin), with
/// `tree::PHASES`.
pub const ROWS: &[&str] = &["io_file", "small_files", "cp_file", "xcp", "cp_tree", "xcp_tree", "start_disk"];

fn counted(name: &str) -> bool {
    ROWS.contains(&name) || tree::PHASES.contains(&name)
}

/// The plugin's arguments for a boot whose markers go to `marks`.
pub fn args(plugin: &Path, counts: &Path, marks: &Path) -> Vec<String> {
    let _ = std::fs::remove_file(marks);
    vec!["-plugin".into(), format!("{},out={},marks={}", plugin.display(), counts.display(), marks.display())]
}

/// Replaces each storage row's trial totals in `side` (parsed from
/// `serial`) by the instructions between its markers in `marks` (the
/// plugin's file); a mismatch is the side's problem.
pub fn apply(side: &mut Side, serial: &str, marks: &Path) {
    if let Err(e) = replace(side, serial, marks) {
        side.problem = side.problem.take().or(Some(format!("storage rows' instruction counts: {e}")));
    }
}

fn replace(side: &mut Side, serial: &str, marks: &Path) -> Result<(), String> {
    // The rows' trials in the order they ran.
    let order: Vec<&str> = serial
        .lines()
        .filter_map(|l| l.find("BENCH ").map(|at| &l[at..]))
        .filter_map(|l| l.split_whitespace().nth(1))
        .filter(|n| counted(n))
        .collect();
    if order.is_empty() {
        return Ok(());
    }
    let text = std::fs::read_to_string(marks).map_err(|e| format!("{}: {e}", marks.display()))?;
    let totals: Vec<u64> =
        text.lines().map(|l| l.parse().map_err(|_| format!("bad line `{l}`"))).collect::<Result<_, _>>()?;
    if totals.len() != 2 * order.len() {
        return Err(format!("{} markers for {} trials", totals.len(), order.len()));
    }
    let mut next = std::collections::BTreeMap::<&str, usize>::new();
    for (name, pair) in order.iter().zip(totals.chunks(2)) {
        let i = next.entry(name).or_insert(0);
        let trial = side
            .trials
            .get_mut(*name)
            .and_then(|t| t.get_mut(*i))
            .ok_or(format!("no trial {i} of {name}"))?;
        trial.1 = pair[1].checked_sub(pair[0]).ok_or("markers out of order")?;
        *i += 1;
    }
    sum_phases(side)
}

/// Makes each trial of `tree::TOTAL` the sum of the phases' same trial.
fn sum_phases(side: &mut Side) -> Result<(), String> {
    let Some(total) = side.trials.get(tree::TOTAL) else {
        return Ok(());
    };
    let mut sums = Vec::with_capacity(total.len());
    for i in 0..total.len() {
        let mut sum = 0;
        for phase in tree::PHASES {
            sum +=
                side.trials.get(*phase).and_then(|t| t.get(i)).ok_or(format!("no trial {i} of {phase}"))?.1;
        }
        sums.push(sum);
    }
    for (trial, sum) in side.trials.get_mut(tree::TOTAL).into_iter().flatten().zip(sums) {
        trial.1 = sum;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_become_the_instructions_between_markers() {
        let serial = "BENCH-PLAN calib io_file small_files\nBENCH calib 10 10000\nBENCH io_file 1 999999\n\
                      BENCH small_files 50 888\nBENCH io_file 1 777\n";
        let path = std::env::temp_dir().join(format!("marks-test-{}", std::process::id()));
        std::fs::write(&path, "100\n600\n1000\n1050\n2000\n2700\n").unwrap();
        let mut side = Side::parse(serial);
        apply(&mut side, serial, &path);
        assert_eq!(side.problem, None);
        assert_eq!(side.trials["io_file"], [(1, 500), (1, 700)]);
        assert_eq!(side.trials["small_files"], [(50, 50)]);
        assert_eq!(side.trials["calib"], [(10, 10000)]);
        // A lost marker is the side's problem, not a figure.
        std::fs::write(&path, "100\n600\n1000\n").unwrap();
        let mut side = Side::parse(serial);
        apply(&mut side, serial, &path);
        std::fs::remove_file(&path).unwrap();
        assert!(side.problem.unwrap().contains("3 markers for 3 trials"));
    }

    #[test]
    fn the_workload_is_the_sum_of_its_phases() {
        let mut serial = String::from("BENCH-PLAN calib io_tree\n");
        let mut marks = String::new();
        for (i, phase) in tree::PHASES.iter().enumerate() {
            serial.push_str(&format!("BENCH {phase} 1 5\n"));
            marks.push_str(&format!("{}\n{}\n", 1000 * i, 1000 * i + 10 + i));
        }
        serial.push_str("BENCH io_tree 1 123456789\n");
        let path = std::env::temp_dir().join(format!("marks-tree-{}", std::process::id()));
        std::fs::write(&path, &marks).unwrap();
        let mut side = Side::parse(&serial);
        apply(&mut side, &serial, &path);
        assert_eq!(side.problem, None);
        assert_eq!(side.trials["tree_gunzip"], [(1, 11)]);
        let n = tree::PHASES.len() as u64;
        assert_eq!(side.trials["io_tree"], [(1, 10 * n + n * (n - 1) / 2)]);
        // A phase that printed no trial leaves the total without a figure.
        let last = tree::PHASES.len() - 1;
        let cut = serial.replace(&format!("BENCH {} 1 5\n", tree::PHASES[last]), "");
        let lost = format!("{}\n{}\n", 1000 * last, 1000 * last + 10 + last);
        std::fs::write(&path, &marks[..marks.len() - lost.len()]).unwrap();
        let mut side = Side::parse(&cut);
        apply(&mut side, &cut, &path);
        std::fs::remove_file(&path).unwrap();
        assert!(side.problem.unwrap().contains(&format!("no trial 0 of {}", tree::PHASES[last])));
    }
}
