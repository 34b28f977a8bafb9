//! The cassandra-stress command line: `COMMAND [command options] [-GROUP [group options]]…`.
//! Options are `key=value` words, flags and `name(k=v,…)` words, exactly as cassandra-stress
//! takes them (clap cannot express this grammar); an unknown command, group or option is an
//! error that prints the usage text, as cassandra-stress does.

mod command;
mod groups;
pub mod usage;

use crate::dist::DistSpec;
use crate::settings::Settings;

/// What the command line asks for.
#[derive(Debug, Clone, PartialEq)]
pub enum Invocation {
    Stress(Box<Settings>),
    Help(Option<String>),
    Print(DistSpec),
    Version,
}

/// A command-line error; `usage` says which help text to print after the message.
#[derive(Debug, Clone, PartialEq)]
pub struct CliError {
    pub message: String,
    pub usage: Option<String>,
}

impl CliError {
    pub fn new(message: impl Into<String>, usage: Option<&str>) -> CliError {
        CliError {
            message: message.into(),
            usage: usage.map(str::to_string),
        }
    }
}

/// The words of one group (`-rate threads=4` → name `-rate`, params `["threads=4"]`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Group {
    pub name: String,
    pub params: Vec<String>,
}

/// Parses a cassandra-stress command line (without the program name).
pub fn parse(args: &[String]) -> Result<Invocation, CliError> {
    let args = shell_words(args);
    let Some((cmd, rest)) = args.split_first() else {
        return Err(CliError::new("No command provided", Some("")));
    };
    let (rest, png) = take_png(rest)?;
    let (params, mut groups) = split_groups(&rest)?;
    if let Some(file) = png {
        add_png(&mut groups, file);
    }
    match cmd.to_ascii_lowercase().as_str() {
        "help" | "-?" | "--help" | "-help" => {
            let topic = params
                .first()
                .cloned()
                .or_else(|| groups.first().map(|g| g.name.clone()));
            Ok(Invocation::Help(topic))
        }
        "version" => Ok(Invocation::Version),
        "print" => parse_print(&params),
        name => {
            let command = command::parse(name, &params)?;
            let settings = groups::build(command, &groups)?;
            Ok(Invocation::Stress(Box::new(settings)))
        }
    }
}

/// Splits every argument at whitespace, as Apache's `cassandra-stress` script does by passing
/// `$@` unquoted: `"mixed ratio(write=1,read=3)"` given as one argument is two words.
fn shell_words(args: &[String]) -> Vec<String> {
    args.iter()
        .flat_map(|arg| arg.split_ascii_whitespace())
        .map(str::to_string)
        .collect()
}

/// Removes `--png FILE` (helenus's own flag) from the words; returns the rest and FILE.
fn take_png(words: &[String]) -> Result<(Vec<String>, Option<String>), CliError> {
    let Some(i) = words.iter().position(|w| w == "--png") else {
        return Ok((words.to_vec(), None));
    };
    let file = words
        .get(i + 1)
        .ok_or_else(|| CliError::new("--png needs a file name", Some("-graph")))?;
    let mut rest = words.to_vec();
    rest.drain(i..=i + 1);
    Ok((rest, Some(file.clone())))
}

/// `--png FILE` as `-graph png=FILE`.
fn add_png(groups: &mut Vec<Group>, file: String) {
    let param = format!("png={file}");
    match groups.iter_mut().find(|g| g.name == "-graph") {
        Some(g) => g.params.push(param),
        None => groups.push(Group {
            name: "-graph".into(),
            params: vec![param],
        }),
    }
}

fn parse_print(params: &[String]) -> Result<Invocation, CliError> {
    let spec = params
        .iter()
        .find_map(|p| key_value(p, "dist="))
        .ok_or_else(|| CliError::new("print requires dist=DIST", Some("print")))?;
    DistSpec::parse(spec)
        .map(Invocation::Print)
        .map_err(|e| CliError::new(e, Some("print")))
}

/// Splits the words after the command into command params and `-group` blocks. An en dash
/// (`–pop`, as word processors turn `-pop` into) starts a group too.
fn split_groups(words: &[String]) -> Result<(Vec<String>, Vec<Group>), CliError> {
    let mut params = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    for word in words {
        if let Some(name) = group_name(word) {
            groups.push(Group {
                name,
                params: Vec::new(),
            });
        } else if let Some(g) = groups.last_mut() {
            g.params.push(word.clone());
        } else {
            params.push(word.clone());
        }
    }
    Ok((
        join_parens(params)?,
        groups
            .into_iter()
            .map(join_group)
            .collect::<Result<_, _>>()?,
    ))
}

fn group_name(word: &str) -> Option<String> {
    let rest = word
        .strip_prefix('-')
        .or_else(|| word.strip_prefix('\u{2013}'))?;
    let starts_alpha = rest.chars().next().is_some_and(|c| c.is_ascii_alphabetic());
    starts_alpha.then(|| format!("-{}", rest.to_ascii_lowercase()))
}

fn join_group(g: Group) -> Result<Group, CliError> {
    Ok(Group {
        name: g.name,
        params: join_parens(g.params)?,
    })
}

/// Rejoins `name(a=1` `b=2)` split by the shell into `name(a=1,b=2)`.
fn join_parens(words: Vec<String>) -> Result<Vec<String>, CliError> {
    let mut out: Vec<String> = Vec::new();
    let mut open = false;
    for w in words {
        if open {
            if let Some(last) = out.last_mut() {
                last.push(',');
                last.push_str(&w);
            }
        } else {
            out.push(w);
        }
        open = out
            .last()
            .is_some_and(|l| l.matches('(').count() > l.matches(')').count());
    }
    if open {
        return Err(CliError::new(
            format!("Unbalanced parentheses in {:?}", out.last()),
            Some(""),
        ));
    }
    Ok(out)
}

/// The value of `word` if it starts with `key` (case-insensitive), e.g. `n=` in `n=100`.
pub(crate) fn key_value<'a>(word: &'a str, key: &str) -> Option<&'a str> {
    let head = word.get(..key.len())?;
    head.eq_ignore_ascii_case(key).then(|| &word[key.len()..])
}

/// The inside of `name(…)` split on commas, if `word` has that form.
pub(crate) fn sub_options<'a>(word: &'a str, name: &str) -> Option<Vec<&'a str>> {
    let inner = key_value(word, &format!("{name}("))?.strip_suffix(')')?;
    Some(
        inner
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect(),
    )
}

#[cfg(test)]
mod tests;
