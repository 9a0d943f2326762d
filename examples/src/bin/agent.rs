//! The `agent` reference CLI.

fn main() {
    println!("agent: see `agent --help`");
}
