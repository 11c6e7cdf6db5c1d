//! Which hosts of a URL are internal: addresses and names that reach the
//! proxy itself, its pod's network, its cloud's metadata service or its
//! cluster, rather than the public internet. A tenant's object that would
//! make the proxy call such a host is refused unless the platform allows
//! the host (see `LiteLLMInstance.spec.tenantMcpServerHosts`).
//!
//! The check is on the URL as written (after the WHATWG parsing LiteLLM's
//! HTTP clients also apply, so `http://2130706433/` and `http://0x7f.1/`
//! are the loopback address they denote); a public name that resolves to an
//! internal address is a matter for an egress policy, which the tenancy
//! docs recommend.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::Url;

/// Why `url`'s host is internal (a phrase naming the kind of address or
/// name), or `None` for a public host and for a URL without one.
pub fn internal(url: &Url) -> Option<&'static str> {
    match url.host()? {
        url::Host::Ipv4(ip) => internal_ipv4(ip),
        url::Host::Ipv6(ip) => internal_ipv6(ip),
        url::Host::Domain(name) => internal_name(name),
    }
}

/// The host of `url` as the allow-list names it: lower case, without the
/// brackets of an IPv6 address or a trailing dot.
pub fn allow_list_form(url: &Url) -> Option<String> {
    let host = match url.host()? {
        url::Host::Ipv6(ip) => ip.to_string(),
        other => other.to_string(),
    };
    Some(host.trim_end_matches('.').to_ascii_lowercase())
}

/// Whether `allowed` (entries as the instance lists them) names `url`'s host.
pub fn allowed(url: &Url, allowed: &[String]) -> bool {
    let Some(host) = allow_list_form(url) else {
        return false;
    };
    allowed.iter().any(|entry| {
        let entry = entry.trim().trim_start_matches('[').trim_end_matches(']');
        let entry = entry.trim_end_matches('.');
        // An address entry is compared as an address, so any spelling
        // matches; `*.domain` admits every name below the domain.
        match (entry.parse::<IpAddr>(), host.parse::<IpAddr>()) {
            (Ok(a), Ok(b)) => a == b,
            _ => crate::api::mcp_server::host_entry_admits(entry, &host),
        }
    })
}

fn internal_ipv4(ip: Ipv4Addr) -> Option<&'static str> {
    let [a, b, ..] = ip.octets();
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_link_local() {
        Some("a link-local address (such as the cloud metadata service's)")
    } else if ip.is_private() {
        Some("a private-range address")
    } else if ip.is_unspecified() || a == 0 {
        Some("an address of this host")
    } else if a == 100 && (64..128).contains(&b) {
        Some("a shared (carrier-grade NAT) address")
    } else if ip.is_broadcast() || ip.is_multicast() || a >= 240 {
        Some("a broadcast, multicast or reserved address")
    } else if a == 192 && b == 0 && ip.octets()[2] == 0 {
        Some("an IETF protocol address")
    } else if a == 198 && (18..20).contains(&b) {
        Some("a benchmarking address")
    } else {
        None
    }
}

fn internal_ipv6(ip: Ipv6Addr) -> Option<&'static str> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return internal_ipv4(v4);
    }
    let first = ip.segments()[0];
    if ip.is_loopback() {
        Some("a loopback address")
    } else if ip.is_unspecified() {
        Some("an address of this host")
    } else if first & 0xffc0 == 0xfe80 {
        Some("a link-local address")
    } else if first & 0xfe00 == 0xfc00 {
        Some("a unique-local (private) address")
    } else if first & 0xffc0 == 0xfec0 {
        Some("a site-local address")
    } else if ip.is_multicast() {
        Some("a multicast address")
    } else if ip.segments()[..6] == [0, 0, 0, 0, 0, 0] {
        // IPv4-compatible (deprecated) addresses reach the IPv4 one.
        let [.., c, d] = ip.segments();
        internal_ipv4(Ipv4Addr::new(
            (c >> 8) as u8,
            c as u8,
            (d >> 8) as u8,
            d as u8,
        ))
        .or(Some("an IPv4-compatible address"))
    } else if first == 0x0064 && ip.segments()[1] == 0xff9b {
        Some("a NAT64 address")
    } else {
        None
    }
}

/// Suffixes of names that only resolve inside a cluster, a cloud or a
/// local network.
const INTERNAL_SUFFIXES: &[&str] = &[
    ".svc",
    ".cluster.local",
    ".internal",
    ".local",
    ".localhost",
    ".localdomain",
    ".home.arpa",
    ".in-addr.arpa",
    ".ip6.arpa",
];

fn internal_name(name: &str) -> Option<&'static str> {
    let name = name.trim_end_matches('.').to_ascii_lowercase();
    if name == "localhost" || name.ends_with(".localhost") {
        Some("a loopback name")
    } else if !name.contains('.') {
        Some("a single-label name, which resolves inside the proxy's cluster or network")
    } else if INTERNAL_SUFFIXES.iter().any(|s| name.ends_with(s)) {
        Some("a cluster-internal or local name")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    #[test]
    fn internal_hosts_in_every_spelling() {
        let internal_urls = [
            "http://127.0.0.1:8080/mcp",
            "http://127.1/",
            "http://2130706433/",
            "http://0x7f000001/",
            "http://0177.0.0.1/",
            "http://localhost/",
            "http://LOCALHOST./",
            "http://api.localhost/",
            "http://169.254.169.254/latest/meta-data/",
            "http://169.254.170.2/v2/credentials",
            "http://10.0.0.1/",
            "http://172.16.5.4/",
            "http://192.168.1.1/",
            "http://100.64.0.1/",
            "http://0.0.0.0/",
            "http://[::1]/",
            "http://[::]/",
            "http://[::ffff:127.0.0.1]/",
            "http://[::ffff:169.254.169.254]/",
            "http://[::127.0.0.1]/",
            "http://[fe80::1]/",
            "http://[fd00::1]/",
            "http://[fd00:ec2::254]/",
            "http://metadata/",
            "http://metadata.google.internal/computeMetadata/v1/",
            "http://kubernetes.default.svc/",
            "http://kubernetes.default.svc.cluster.local./",
            "http://litellm.platform.svc:4000/",
            "http://printer.local/",
            "http://kubernetes/",
        ];
        for text in internal_urls {
            assert!(internal(&url(text)).is_some(), "{text} is internal");
        }
        let public = [
            "https://mcp.example.com/mcp",
            "https://api.githubcopilot.com/mcp/",
            "http://8.8.8.8/",
            "http://[2001:4860:4860::8888]/",
            "https://svc.example.com/",
            "https://internal.example.com/",
        ];
        for text in public {
            assert_eq!(internal(&url(text)), None, "{text} is public");
        }
    }

    #[test]
    fn the_allow_list_names_hosts_as_written_and_addresses_in_any_spelling() {
        let list = vec![
            "127.0.0.1".to_owned(),
            "MCP.Tools.SVC".to_owned(),
            "[::1]".to_owned(),
            "*.mcp.internal".to_owned(),
        ];
        assert!(allowed(&url("http://127.0.0.1:9000/mcp"), &list));
        assert!(allowed(&url("http://2130706433/"), &list));
        assert!(allowed(&url("http://mcp.tools.svc./"), &list));
        assert!(allowed(&url("http://[0:0::1]/"), &list));
        assert!(!allowed(&url("http://127.0.0.2/"), &list));
        assert!(!allowed(&url("http://tools.svc/"), &list));
        assert!(!allowed(&url("http://169.254.169.254/"), &list));
        assert!(!allowed(&url("http://169.254.169.254/"), &[]));
        assert!(allowed(&url("http://github.mcp.internal/"), &list));
        assert!(allowed(&url("http://a.b.mcp.internal/"), &list));
        assert!(!allowed(&url("http://mcp.internal/"), &list));
        assert!(!allowed(&url("http://evilmcp.internal/"), &list));
    }
}
