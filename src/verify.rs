//! `kreplicate verify`: compare a source and a target topic partition by partition.
//! (Being written: see issue 4.)

use clap::Args;

use crate::error::{Error, Result};

#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// Source cluster: a name from the config file, or host:port[,host:port]
    #[arg(long, value_name = "CLUSTER")]
    pub from: Option<String>,
}

pub fn run(_args: &VerifyArgs) -> Result<i32> {
    Err(Error::usage("verify is not available yet"))
}
