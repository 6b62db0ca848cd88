fn main() {
    std::process::exit(qg::cli::main());
}
