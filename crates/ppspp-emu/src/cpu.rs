//! The process's CPU time, for the emulator's figures (issue 27: "wall-clock
//! CPU" beside the results) and its benchmarks.

/// Clock ticks per second in `/proc/self/stat`: `USER_HZ`, 100 on every
/// Linux architecture the kernel exports to user space.
const USER_HZ: f64 = 100.0;

/// User plus system CPU seconds this process has used so far, from
/// `/proc/self/stat` (Linux); `None` where that cannot be read.
pub fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    parse_stat(&stat)
}

/// Fields 14 and 15 (`utime`, `stime`) of a `/proc/PID/stat` line, in
/// seconds. The command name (field 2) may hold spaces and parentheses, so
/// the fields are counted from its last `)`.
fn parse_stat(stat: &str) -> Option<f64> {
    let rest = stat.rsplit_once(')')?.1;
    let mut f = rest.split_whitespace().skip(11);
    let user: f64 = f.next()?.parse().ok()?;
    let system: f64 = f.next()?.parse().ok()?;
    Some((user + system) / USER_HZ)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_and_system_ticks_are_added_after_the_command_name() {
        let line = "4242 (a) b (c)) S 1 2 3 4 5 6 7 8 9 10 250 50 0 0 20 0";
        assert_eq!(parse_stat(line), Some(3.0));
        assert_eq!(parse_stat("4242 (x) S 1"), None);
        assert!(cpu_seconds().is_some_and(|s| s >= 0.0));
    }
}
