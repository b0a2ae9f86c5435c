//! The `oq` binary: parse the command line and run the door it names.

use clap::Parser;

fn main() {
    let cli = oq::cli::Cli::parse();
    std::process::exit(oq::cli::run(cli));
}
