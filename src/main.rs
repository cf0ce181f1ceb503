//! The `kotoba` binary: parse the command line and run a surface.
fn main() {}
