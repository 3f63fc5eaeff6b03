//! Who is calling: the address a request came from, and the bearer token it presents.

use std::net::IpAddr;

use actix_web::HttpRequest;
use actix_web::http::header;

/// The address a request came from, for per-IP limits.
pub(crate) fn client_ip(req: &HttpRequest, trust_forwarded: bool) -> Option<IpAddr> {
    if trust_forwarded {
        let info = req.connection_info();
        if let Some(ip) = info.realip_remote_addr().and_then(|a| a.parse().ok()) {
            return Some(ip);
        }
    }
    req.peer_addr().map(|a| a.ip())
}

/// The token after `Bearer ` in `Authorization` (the scheme is case-insensitive).
pub(crate) fn bearer_token(req: &HttpRequest) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}
