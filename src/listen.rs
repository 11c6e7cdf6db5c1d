//! Listen addresses as Go programs write them: `:8080` (every interface)
//! besides `host:port`, so the flags a Crossplane user copies from Go
//! providers and functions work for both binaries.

use std::net::SocketAddr;

/// `:PORT` or `HOST:PORT` (an IPv6 host in brackets), with a message that
/// names what was wrong.
pub fn parse(text: &str) -> Result<SocketAddr, String> {
    let full = match text.strip_prefix(':') {
        Some(port) => format!("0.0.0.0:{port}"),
        None => text.to_owned(),
    };
    full.parse().map_err(|err| {
        format!("{text:?} is no listen address such as :8080 or 0.0.0.0:8080 ({err})")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_and_rust_forms() {
        assert_eq!(parse(":8080").unwrap(), "0.0.0.0:8080".parse().unwrap());
        assert_eq!(
            parse("127.0.0.1:9").unwrap(),
            "127.0.0.1:9".parse().unwrap()
        );
        assert_eq!(parse("[::1]:9").unwrap(), "[::1]:9".parse().unwrap());
        assert!(parse(":99999").unwrap_err().contains(":99999"));
        assert!(parse("localhost").is_err());
    }
}
