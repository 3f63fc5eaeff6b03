//! Every committed input of every fuzz target, through the target's body: the seeds the
//! fuzzers start from (`fuzz/seeds/<target>`; `make fuzz` adds the tests' fixtures) and
//! each crash, hang or runaway allocation they found (`fuzz/regressions/<target>`). A
//! crash found once fails `make test` until it is fixed.

#![expect(clippy::unwrap_used, reason = "tests")]

use std::path::{Path, PathBuf};

fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
    let mut inputs: Vec<PathBuf> = ["seeds", "regressions"]
        .iter()
        .filter_map(|kind| std::fs::read_dir(root.join(kind).join(target)).ok())
        .flatten()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.is_file() && path.file_name().is_some_and(|n| n != ".gitkeep"))
        .collect();
    inputs.sort();
    inputs
}

#[test]
fn every_saved_input_passes_its_target() {
    for (target, body) in fuzzing::TARGETS {
        let inputs = inputs(target);
        assert!(!inputs.is_empty(), "{target} has seeds in fuzz/seeds/{target}");
        for input in inputs {
            let data = std::fs::read(&input).unwrap();
            let outcome = std::panic::catch_unwind(|| body(&data));
            assert!(outcome.is_ok(), "{target} fails on {}", input.display());
        }
    }
}
