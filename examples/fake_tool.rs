//! A small program the Windows tests use as a tool (tests/windows.rs): a
//! Windows program of our own where the Linux tests use `sh` scripts.
//!
//! - `fake_tool print FILE`: prints FILE; exits 1 if it holds anything
//!   (findings), else 0 — a gate's command and a daemon's check.
//! - `fake_tool beat FILE`: writes the time to FILE every 50 ms, forever —
//!   a process whose life a test can see from outside.
//! - `fake_tool spawn-and-sleep FILE`: starts `fake_tool beat FILE` as a
//!   child, then sleeps: a tool whose tree a timeout must kill whole.
//! - `fake_tool serve READY FILE`: creates READY, then beats FILE — a
//!   daemon's long-running tool.
//! - `fake_tool touch FILE`: creates FILE and exits 0 — a gate whose run a
//!   test can see afterwards.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |i: usize| args.get(i).map(String::as_str).unwrap_or_default();
    match arg(0) {
        "print" => print(Path::new(arg(1))),
        "beat" => beat(Path::new(arg(1))),
        "spawn-and-sleep" => {
            let me = std::env::current_exe().expect("the program's own path");
            let mut child = std::process::Command::new(me)
                .args(["beat", arg(1)])
                .spawn()
                .expect("the child starts");
            // The child beats forever: waiting on it is sleeping until a
            // timeout kills the whole tree, which is what a test checks.
            let _ = child.wait();
        }
        "touch" => std::fs::write(arg(1), "ran").expect("the file is written"),
        "serve" => {
            std::fs::write(arg(1), "ready").expect("the ready file is written");
            beat(Path::new(arg(2)));
        }
        other => {
            eprintln!("fake_tool: unknown command {other:?}");
            std::process::exit(2);
        }
    }
}

fn print(file: &Path) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    print!("{text}");
    std::process::exit(i32::from(!text.trim().is_empty()));
}

fn beat(file: &Path) -> ! {
    loop {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or_default();
        let _ = std::fs::write(file, now.to_string());
        std::thread::sleep(Duration::from_millis(50));
    }
}
