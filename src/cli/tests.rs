use super::*;
use clap::CommandFactory;

#[test]
fn verify_cli() {
    Cli::command().debug_assert();
}

#[test]
fn every_flag_has_help() {
    fn check(cmd: &clap::Command, path: &str) {
        for arg in cmd.get_arguments() {
            if arg.is_hide_set() || arg.get_id() == "help" || arg.get_id() == "version" {
                continue;
            }
            assert!(
                arg.get_help().is_some(),
                "{path} --{} has no help text",
                arg.get_id()
            );
        }
        for sub in cmd.get_subcommands() {
            check(sub, &format!("{path} {}", sub.get_name()));
        }
    }
    check(&command(), "kreplicate");
}
