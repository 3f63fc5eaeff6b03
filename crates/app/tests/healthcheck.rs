//! `billable healthcheck`, as a container's `HEALTHCHECK` runs it: success while the server
//! answers ready, failure naming what it asked once nothing answers.

#![expect(clippy::unwrap_used, clippy::expect_used, reason = "tests")]

mod support;

use support::{Scratch, billable, serve_rest};

#[test]
fn the_healthcheck_passes_while_the_server_is_ready_and_fails_once_it_is_gone() {
    let scratch = Scratch::new("healthcheck");
    let url = scratch.sqlite_url();
    let (mut server, port) = serve_rest(&url, &[]);
    let check = |listen: &str| billable(&url).args(["healthcheck", "--listen", listen]).output().unwrap();

    // A server listening on every address is asked on loopback.
    let ready = check(&format!("0.0.0.0:{port}"));
    assert!(ready.status.success(), "{}", String::from_utf8_lossy(&ready.stderr));

    server.kill().unwrap();
    server.wait().unwrap();
    let gone = check(&port.to_string());
    assert_eq!(gone.status.code(), Some(1));
    let said = String::from_utf8_lossy(&gone.stderr);
    assert!(said.contains(&format!("http://127.0.0.1:{port}/readyz")), "{said}");
}
