fn main() {
    std::process::exit(kreplicate::run_cli(std::env::args_os()));
}
