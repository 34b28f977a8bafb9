//! nodetool's global options (`-h host`, `-p port`, `--token-file` for an admin API that
//! requires a token; JMX credentials are accepted and ignored) and the split into command
//! and arguments.

/// A parsed command line.
#[derive(Debug, PartialEq)]
pub struct Invocation {
    pub host: String,
    pub port: u16,
    /// `--token-file`: the file holding the admin API's token.
    pub token_file: Option<String>,
    pub command: String,
    pub args: Vec<String>,
}

/// Bad global options.
#[derive(Debug, PartialEq)]
pub struct UsageError(pub String);

const DEFAULT_HOST: &str = "127.0.0.1";
const DEFAULT_PORT: u16 = 7199;

/// Options taking a value that Helenus ignores.
const IGNORED_WITH_VALUE: [&str; 6] = [
    "-u",
    "--username",
    "-pw",
    "--password",
    "-pwf",
    "--password-file",
];

pub fn parse(argv: &[String]) -> Result<Invocation, UsageError> {
    let mut host = DEFAULT_HOST.to_string();
    let mut port = DEFAULT_PORT;
    let mut token_file = None;
    let mut rest = Vec::new();
    let mut words = argv.iter();
    while let Some(word) = words.next() {
        match word.as_str() {
            "-h" | "--host" => host = value(word, words.next())?.to_string(),
            "-p" | "--port" => port = parse_port(value(word, words.next())?)?,
            "--token-file" => token_file = Some(value(word, words.next())?.to_string()),
            "-pp" | "--print-port" => {}
            w if IGNORED_WITH_VALUE.contains(&w) => {
                value(word, words.next())?;
            }
            _ => rest.push(word.clone()),
        }
    }
    let mut rest = rest.into_iter();
    let command = rest.next().unwrap_or_else(|| "help".to_string());
    Ok(Invocation {
        host,
        port,
        token_file,
        command,
        args: rest.filter(|a| a != "--").collect(),
    })
}

fn value<'a>(option: &str, next: Option<&'a String>) -> Result<&'a str, UsageError> {
    next.map(String::as_str).ok_or_else(|| {
        UsageError(format!(
            "Required values for option '{option}' not provided"
        ))
    })
}

fn parse_port(text: &str) -> Result<u16, UsageError> {
    text.parse()
        .map_err(|_| UsageError(format!("port: can not convert \"{text}\" to a int")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<String> {
        words.iter().map(|w| w.to_string()).collect()
    }

    #[test]
    fn options_anywhere() {
        let inv = parse(&argv(&[
            "flush", "-p", "7300", "ks", "-h", "10.0.0.1", "t1",
        ]))
        .unwrap();
        assert_eq!(
            inv,
            Invocation {
                host: "10.0.0.1".into(),
                port: 7300,
                token_file: None,
                command: "flush".into(),
                args: argv(&["ks", "t1"]),
            }
        );
    }

    #[test]
    fn defaults_and_help() {
        let inv = parse(&[]).unwrap();
        assert_eq!(
            (inv.host.as_str(), inv.port, inv.command.as_str()),
            ("127.0.0.1", 7199, "help")
        );
    }

    #[test]
    fn bad_ports_and_missing_values() {
        assert!(parse(&argv(&["-p", "x", "status"])).is_err());
        assert!(parse(&argv(&["status", "-h"])).is_err());
        let inv = parse(&argv(&["-u", "cassandra", "-pw", "x", "status"])).unwrap();
        assert_eq!(inv.command, "status");
        let inv = parse(&argv(&["--token-file", "/etc/t", "info"])).unwrap();
        assert_eq!(inv.token_file.as_deref(), Some("/etc/t"));
        assert!(parse(&argv(&["info", "--token-file"])).is_err());
    }
}
