//! The browser origins a listener lets in: a request that carries `Origin` comes from a
//! page, and only a page served from a listed origin may drive what a key can do.

/// The browser origins allowed to call `/mcp` (`BILLABLE_MCP_ALLOWED_ORIGINS`), each as
/// `scheme://host[:port]` in lowercase, without a default port.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowedOrigins(Vec<String>);

impl AllowedOrigins {
    /// Origins separated by commas (`https://claude.ai, http://localhost:6274`); empty for
    /// none. Each must be `http://` or `https://` a host, with a port or not, and no path.
    pub fn parse(list: &str) -> Result<Self, String> {
        let origins = list
            .split(',')
            .map(str::trim)
            .filter(|origin| !origin.is_empty())
            .map(|origin| {
                normalized(origin).ok_or_else(|| {
                    format!("{origin:?} is not an origin: write scheme://host[:port], e.g. https://app.example.com")
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self(origins))
    }

    /// Whether `origin`, as a browser sent it, is one of these.
    pub(crate) fn allows(&self, origin: &str) -> bool {
        normalized(origin).is_some_and(|origin| self.0.contains(&origin))
    }
}

/// `origin` as browsers write it (RFC 6454): lowercase, no default port, no trailing `/`.
fn normalized(origin: &str) -> Option<String> {
    let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
    let (scheme, authority) = origin.split_once("://")?;
    let default_port = match scheme {
        "http" => ":80",
        "https" => ":443",
        _ => return None,
    };
    let valid = |c: char| c.is_ascii_alphanumeric() || "-.:[]".contains(c);
    if authority.is_empty() || !authority.chars().all(valid) {
        return None;
    }
    Some(format!("{scheme}://{}", authority.strip_suffix(default_port).unwrap_or(authority)))
}

#[cfg(test)]
mod tests {
    use super::AllowedOrigins;

    #[test]
    fn origins_are_compared_as_browsers_write_them() {
        let allowed =
            AllowedOrigins::parse(" https://Claude.ai/ , http://localhost:6274,http://127.0.0.1:80").unwrap();
        assert!(allowed.allows("https://claude.ai"));
        assert!(allowed.allows("http://localhost:6274"));
        assert!(allowed.allows("http://127.0.0.1"), "the default port is left out");
        for refused in ["https://evil.example", "http://localhost:3000", "http://claude.ai", "null", ""] {
            assert!(!allowed.allows(refused), "{refused}");
        }
        assert_eq!(AllowedOrigins::parse("").unwrap(), AllowedOrigins::default());
        for bad in ["claude.ai", "ftp://x", "https://a.example/path", "https://"] {
            assert!(AllowedOrigins::parse(bad).is_err(), "{bad}");
        }
    }
}
