//! The one-bottleneck scenario of the transport fidelity tests
//! (`tcp_sharing.rs`, `utp_fidelity.rs`): a seeder nobody downloads from
//! (a scenario needs one), a sending host `src` with a 10 Mbit/s uplink
//! and the given queue, two receivers `dst[0]`, `dst[1]` behind
//! 100 Mbit/s links; 20 ms each way. `tail` is appended ([record],
//! [[flows]]).

/// The scenario text.
pub fn dumbbell(name: &str, duration: &str, queue: &str, tail: &str) -> String {
    format!(
        r#"name = "{name}"
seed = 1
duration = "{duration}"
stop_when_done = false

[content]
size = "1MB"
chunk_size = "1024B"

[network]
groups = ["all"]
delay = [["20ms"]]

[classes.sender]
up = "10Mbit/s"
down = "100Mbit/s"
queue = "{queue}"

[classes.receiver]
up = "100Mbit/s"
down = "100Mbit/s"
queue = "50ms"

[[peers]]
name = "seeder"
class = "receiver"
role = "seeder"

[[peers]]
name = "src"
class = "sender"
role = "host"

[[peers]]
name = "dst"
count = 2
class = "receiver"
role = "host"

{tail}"#
    )
}
