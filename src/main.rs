fn main() -> std::process::ExitCode {
    kreplicate::run_cli(std::env::args_os()).code().into()
}
