//! What the emulator's tests share.

/// A flash crowd of 6 leechers on 2 Mbit/s uplinks and a 4 Mbit/s seeder,
/// 400 kB: a few seconds of real time.
#[allow(dead_code)] // not every test binary uses it
pub const SCENARIO: &str = r#"
name = "emu-flash"
seed = 3
duration = "60s"
stop_when_done = true

[content]
size = "400KB"

[network]
groups = ["all"]
delay = [["10ms"]]

[classes.server]
up = "4Mbit/s"
down = "10Mbit/s"
queue = "100ms"

[classes.home]
up = "2Mbit/s"
down = "8Mbit/s"
queue = "200ms"
delay = "5ms"

[[peers]]
name = "seeder"
class = "server"
role = "seeder"

[[peers]]
name = "leechers"
count = 6
class = "home"
role = "leecher"
arrival = { kind = "flash", at = "1s" }
"#;

/// The column `name` of a results CSV, one string per row.
#[allow(dead_code)] // not every test binary uses it
pub fn column(csv: &str, name: &str) -> Vec<String> {
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let i = head.iter().position(|h| *h == name).unwrap();
    lines
        .map(|l| l.split(',').nth(i).unwrap_or("").to_string())
        .collect()
}
