//! `tilescope sim`.
use crate::Failed;

#[derive(clap::Args)]
pub struct Args {
    #[arg(long, default_value = "a3")]
    pub preset: String,
    #[arg(long)]
    pub json: bool,
}

pub fn run(_args: Args) -> Result<(), Failed> {
    Err(crate::io::fail(
        "the simulator is not available in this build",
    ))
}
