//! The PostgreSQL connection URL of a provisioned proxy, built from the
//! discrete values of `spec.database` and a username/password Secret, the way
//! LiteLLM's component chart takes them.

/// `postgresql://user:password@host:port/name` with the user, password and
/// database name percent-encoded, so any byte sequence (`@`, `/`, `%`, `:`,
/// `?`, `#`, spaces, non-ASCII) survives the round trip through a URL parser.
///
/// `host` is not encoded: it is checked by [`valid_host`] first, since an
/// encoded host name would not resolve.
pub fn database_url(host: &str, port: i32, name: &str, user: &str, password: &str) -> String {
    format!(
        "postgresql://{}:{}@{host}:{port}/{}",
        encode(user),
        encode(password),
        encode(name)
    )
}

/// The URL of [`database_url`] with query parameters (`schema`,
/// `sslmode`, `sslrootcert`), each value percent-encoded except `/`, which
/// a query may carry as is (a file path stays readable).
pub fn database_url_with(
    host: &str,
    port: i32,
    name: &str,
    user: &str,
    password: &str,
    params: &[(&str, String)],
) -> String {
    let mut url = database_url(host, port, name, user, password);
    for (index, (key, value)) in params.iter().enumerate() {
        url.push(if index == 0 { '?' } else { '&' });
        url.push_str(&encode(key));
        url.push('=');
        url.push_str(&encode(value).replace("%2F", "/"));
    }
    url
}

/// Whether `schema` is a plain PostgreSQL identifier (what the chart's
/// `DATABASE_SCHEMA` and Prisma's `schema=` can carry unquoted).
pub fn valid_schema(schema: &str) -> bool {
    let mut chars = schema.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && schema.len() <= 63
}

/// Whether `name` survives as the URL path: URL parsers (WHATWG, and so
/// most drivers) resolve a `.` or `..` segment, even percent-encoded, away.
pub fn valid_database_name(name: &str) -> bool {
    name != "." && name != ".."
}

/// Whether `host` can stand in the authority of a URL as is: a DNS name,
/// an IPv4 address or a bracketed IPv6 address.
pub fn valid_host(host: &str) -> bool {
    let bracketed = host.starts_with('[') && host.ends_with(']') && host.len() > 2;
    let inner = if bracketed {
        &host[1..host.len() - 1]
    } else {
        host
    };
    !inner.is_empty()
        && inner.chars().all(|c| {
            c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '_' || (bracketed && c == ':')
        })
}

/// Percent-encodes every byte outside RFC 3986's unreserved set. Encoding
/// more than the userinfo strictly needs is harmless and leaves no character
/// whose meaning differs between URL parsers (LiteLLM's own builder uses
/// `quote_plus`, which turns spaces into `+`; `%20` is unambiguous instead).
fn encode(value: &str) -> String {
    let mut encoded = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'.' | b'_' | b'~') {
            encoded.push(char::from(byte));
        } else {
            encoded.push_str(&format!("%{byte:02X}"));
        }
    }
    encoded
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Decodes a percent-encoded component. `form_urlencoded` would also turn
    /// `+` into a space, but [`encode`] never emits a bare `+`.
    fn decode(component: &str) -> String {
        url::form_urlencoded::parse(format!("v={component}").as_bytes())
            .next()
            .map(|(_, value)| value.into_owned())
            .unwrap_or_default()
    }

    #[test]
    fn hostile_passwords_from_the_chart_guide_are_encoded() {
        assert_eq!(
            database_url("postgres.internal", 5432, "litellm", "llm", "p@ss/w%rd"),
            "postgresql://llm:p%40ss%2Fw%25rd@postgres.internal:5432/litellm"
        );
        assert_eq!(
            database_url("db", 6543, "my db", "a:b", "x?y#z"),
            "postgresql://a%3Ab:x%3Fy%23z@db:6543/my%20db"
        );
    }

    #[test]
    fn schema_and_tls_go_into_the_query() {
        let url = database_url_with(
            "db",
            5432,
            "litellm",
            "u",
            "p@ss",
            &[
                ("schema", "tenant_a".to_string()),
                ("sslmode", "verify-full".to_string()),
                ("sslrootcert", "/etc/litellm-database-ca/ca.crt".to_string()),
            ],
        );
        assert_eq!(
            url,
            "postgresql://u:p%40ss@db:5432/litellm?schema=tenant_a&sslmode=verify-full&sslrootcert=/etc/litellm-database-ca/ca.crt"
        );
        let parsed = url::Url::parse(&url).unwrap();
        let pairs: Vec<(String, String)> = parsed.query_pairs().into_owned().collect();
        assert_eq!(pairs[2].1, "/etc/litellm-database-ca/ca.crt");
        assert_eq!(
            database_url_with("db", 1, "n", "u", "p", &[]),
            database_url("db", 1, "n", "u", "p")
        );
    }

    #[test]
    fn schemas_are_plain_identifiers() {
        for good in ["public", "tenant_a", "_x", "A1"] {
            assert!(valid_schema(good), "{good}");
        }
        for bad in ["", "1a", "a-b", "a;drop", "a b", "\"x\"", &"a".repeat(64)] {
            assert!(!valid_schema(bad), "{bad}");
        }
    }

    #[test]
    fn hosts_are_names_or_addresses() {
        for good in ["postgres", "db.ns.svc", "10.0.0.1", "[::1]", "pg_1"] {
            assert!(valid_host(good), "{good}");
        }
        for bad in ["", "a@b", "a/b", "a:5432", "a b", "[]", "h?x", "h#x", "::1"] {
            assert!(!valid_host(bad), "{bad}");
        }
    }

    proptest! {
        #[test]
        fn user_password_and_name_round_trip_through_a_url_parser(
            user in any::<String>(),
            password in any::<String>(),
            name in any::<String>().prop_filter("a database name", |n| valid_database_name(n)),
            host in "[a-z][a-z0-9.-]{0,20}",
            port in 1i32..=65535,
        ) {
            let url = database_url(&host, port, &name, &user, &password);
            let parsed = url::Url::parse(&url).expect("a valid URL");
            prop_assert_eq!(parsed.scheme(), "postgresql");
            prop_assert_eq!(parsed.host_str(), Some(host.as_str()));
            prop_assert_eq!(parsed.port(), Some(port as u16));
            prop_assert_eq!(decode(parsed.username()), user);
            prop_assert_eq!(decode(parsed.password().unwrap_or("")), password);
            prop_assert_eq!(decode(&parsed.path()[1..]), name);
            prop_assert!(parsed.query().is_none() && parsed.fragment().is_none());
        }

        #[test]
        fn reserved_characters_never_appear_unencoded(password in "[@/%:?#\\[\\] +]{1,16}") {
            let url = database_url("db", 5432, "litellm", "u", &password);
            let userinfo = url.trim_start_matches("postgresql://").split_once("@db:").unwrap().0;
            prop_assert_eq!(userinfo.matches('@').count(), 0);
            prop_assert_eq!(userinfo.matches(':').count(), 1);
            prop_assert!(!userinfo.contains(['/', '?', '#', '[', ']', ' ', '+']));
        }
    }
}
