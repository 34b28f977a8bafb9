//! The `helenus` command line: `helenus server` runs a node.
fn main() {
    println!("helenus");
}
