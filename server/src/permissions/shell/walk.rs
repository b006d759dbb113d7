//! The syntax walk: the command parsed by `brush-parser`, every simple
//! command found (in lists, pipelines, compound commands and
//! substitutions), each word read after quote removal with whether it is
//! static, and the parts that are a concern on their own (redirections,
//! `eval`, functions, variables set for a command, arithmetic, `[[ … ]]`).
//! Each simple command is then judged ([`super::judge`]) and unwrapped
//! ([`super::wrappers`]).

use std::path::{Path, PathBuf};

use brush_parser::ast;
use brush_parser::word::{WordPiece, WordPieceWithSource};

use super::paths::{self, Place};
use super::wrappers::{self, Inner};
use super::{base_name, is_interpreter, judge, Analysis, ShellEnv, SimpleCommand, Write, MAX_COMMAND_CHARS, MAX_DEPTH};

/// At most this many paths are kept for read deny rules per command.
const MAX_READS: usize = 4096;

pub fn analyze(command: &str, env: &ShellEnv) -> Analysis {
    let mut walker = Walker { env, analysis: Analysis::default(), cwd: Some(env.cwd.clone()) };
    walker.program(command, 0);
    walker.analysis
}

struct Walker<'a> {
    env: &'a ShellEnv,
    analysis: Analysis,
    /// Where relative paths point after the `cd`s seen so far (`None`:
    /// only known when the command runs). Subshells are not scoped: a
    /// `cd` inside one is assumed to last, which can only ask more.
    cwd: Option<PathBuf>,
}

/// A word after quote removal.
struct Word {
    text: String,
    /// No expansion of any kind happens to it when it runs.
    is_static: bool,
}

fn parser_options() -> brush_parser::ParserOptions {
    brush_parser::ParserOptions { enable_extended_globbing: true, posix_mode: false, sh_mode: false, tilde_expansion: true }
}

fn parse_program(text: &str) -> Result<ast::Program, String> {
    let text = text.to_string();
    // The parser is third-party code fed with model output: a panic in it
    // must become "ask", never a crashed server.
    std::panic::catch_unwind(move || {
        let mut parser =
            brush_parser::Parser::new(std::io::Cursor::new(text.as_bytes()), &parser_options(), &brush_parser::SourceInfo::default());
        parser.parse_program().map_err(|e| e.to_string())
    })
    .unwrap_or_else(|_| Err("the shell parser failed".into()))
}

impl Walker<'_> {
    fn concern(&mut self, text: String) {
        if !self.analysis.concerns.contains(&text) {
            self.analysis.concerns.push(text);
        }
    }

    fn unknown(&mut self, text: String) {
        if !self.analysis.unknown.contains(&text) {
            self.analysis.unknown.push(text);
        }
    }

    fn program(&mut self, text: &str, depth: usize) {
        if depth > MAX_DEPTH {
            self.concern(format!("command substitutions are nested more than {MAX_DEPTH} deep"));
            self.unknown(format!("the command nests commands more than {MAX_DEPTH} deep"));
            return;
        }
        if text.chars().count() > MAX_COMMAND_CHARS {
            self.concern(format!("the command is longer than {MAX_COMMAND_CHARS} characters and was not analysed"));
            self.unknown("the command is too long to analyse".into());
            return;
        }
        match parse_program(text) {
            Ok(program) => {
                for list in &program.complete_commands {
                    self.compound_list(list, depth);
                }
            }
            Err(err) => {
                self.concern(format!("the command could not be parsed as shell ({err})"));
                self.unknown("the command could not be parsed".into());
            }
        }
    }

    fn compound_list(&mut self, list: &ast::CompoundList, depth: usize) {
        for ast::CompoundListItem(and_or, _) in &list.0 {
            self.pipeline(&and_or.first, depth);
            for next in &and_or.additional {
                match next {
                    ast::AndOr::And(p) | ast::AndOr::Or(p) => self.pipeline(p, depth),
                }
            }
        }
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, depth: usize) {
        for (index, command) in pipeline.seq.iter().enumerate() {
            let first = self.analysis.commands.len();
            self.command(command, depth);
            if index == 0 {
                continue;
            }
            // `curl … | sh`: an interpreter that reads its program from the pipe.
            let Some(simple) = self.analysis.commands.get(first) else { continue };
            let Some(name) = simple.words.first().cloned() else { continue };
            if is_interpreter(&name) && reads_program_from_stdin(&simple.words) {
                self.concern(format!("pipes into `{name}`, which runs whatever the command before it prints"));
                self.unknown(format!("`{name}` runs the commands it reads from the pipe"));
            }
        }
    }

    fn command(&mut self, command: &ast::Command, depth: usize) {
        match command {
            ast::Command::Simple(simple) => self.simple(simple, depth),
            ast::Command::Compound(compound, redirects) => {
                self.compound(compound, depth);
                if let Some(ast::RedirectList(list)) = redirects {
                    for redirect in list {
                        self.redirect(redirect, depth);
                    }
                }
            }
            ast::Command::Function(function) => {
                self.concern(format!("defines a shell function `{}`", function.fname));
                // Its body runs only when called, by a name the walk cannot follow.
                self.unknown(format!("the shell function `{}` runs commands when called", function.fname));
            }
            ast::Command::ExtendedTest(test) => {
                if !self.extended_test(test, depth) {
                    self.concern("`[[ … ]]` with words only known when it runs (it may evaluate them as arithmetic)".into());
                }
            }
        }
    }

    fn compound(&mut self, compound: &ast::CompoundCommand, depth: usize) {
        match compound {
            ast::CompoundCommand::Arithmetic(arithmetic) => self.arithmetic(&arithmetic.expr.value),
            ast::CompoundCommand::ArithmeticForClause(clause) => {
                for expr in [&clause.initializer, &clause.condition, &clause.updater].into_iter().flatten() {
                    self.arithmetic(&expr.value);
                }
                self.compound_list(&clause.body.0, depth);
            }
            ast::CompoundCommand::BraceGroup(group) => self.compound_list(&group.0, depth),
            ast::CompoundCommand::Subshell(subshell) => self.compound_list(&subshell.0, depth),
            ast::CompoundCommand::ForClause(clause) => {
                let mut all_static = true;
                for word in clause.values.iter().flatten() {
                    all_static &= self.word(&word.value, depth).is_static;
                }
                if !all_static {
                    self.concern(format!("the words of `for {}` are only known when it runs", clause.variable_name));
                }
                self.compound_list(&clause.body.0, depth);
            }
            ast::CompoundCommand::CaseClause(clause) => {
                let mut all_static = self.word(&clause.value.value, depth).is_static;
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        all_static &= self.word(&pattern.value, depth).is_static;
                    }
                    if let Some(list) = &item.cmd {
                        self.compound_list(list, depth);
                    }
                }
                if !all_static {
                    self.concern("a `case` whose words are only known when it runs".into());
                }
            }
            ast::CompoundCommand::IfClause(clause) => {
                self.compound_list(&clause.condition, depth);
                self.compound_list(&clause.then, depth);
                for other in clause.elses.iter().flatten() {
                    if let Some(condition) = &other.condition {
                        self.compound_list(condition, depth);
                    }
                    self.compound_list(&other.body, depth);
                }
            }
            ast::CompoundCommand::WhileClause(clause) | ast::CompoundCommand::UntilClause(clause) => {
                self.compound_list(&clause.0, depth);
                self.compound_list(&clause.1 .0, depth);
            }
        }
    }

    /// Whether every word of the test is static.
    fn extended_test(&mut self, test: &ast::ExtendedTestExpr, depth: usize) -> bool {
        match test {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                let a = self.extended_test(a, depth);
                self.extended_test(b, depth) && a
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => self.extended_test(a, depth),
            ast::ExtendedTestExpr::UnaryTest(_, word) => self.word(&word.value, depth).is_static,
            ast::ExtendedTestExpr::BinaryTest(_, a, b) => {
                let a = self.word(&a.value, depth).is_static;
                self.word(&b.value, depth).is_static && a
            }
        }
    }

    /// Arithmetic evaluates the names in it, and a name's value may hold a
    /// subscript that runs a command (`a[$(…)]`): only numbers and
    /// operators are harmless.
    fn arithmetic(&mut self, expr: &str) {
        let harmless = expr.chars().all(|c| c.is_ascii_digit() || c.is_whitespace() || "+-*/%<>=!&|^~?:(),".contains(c));
        if !harmless {
            self.concern(format!("the arithmetic `{}` evaluates names when it runs", expr.trim()));
        }
        if expr.contains("$(") || expr.contains('`') {
            self.unknown(format!("the arithmetic `{}` runs a command substitution", expr.trim()));
        }
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, depth: usize) {
        let mut assignments = Vec::new();
        let mut redirects = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let index = self.analysis.commands.len();
        for item in simple.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    let value = self.word(&word.value, depth);
                    assignments.push((assignment_name(assignment), value.is_static));
                }
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => redirects.push(redirect),
                ast::CommandPrefixOrSuffixItem::Word(word) => words.push(self.word(&word.value, depth)),
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                    self.compound_list(&subshell.0, depth + 1);
                    words.push(Word { text: "<(…)".into(), is_static: false });
                }
            }
        }
        if let Some(name) = &simple.word_or_name {
            words.push(self.word(&name.value, depth));
        }
        for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::Word(word) | ast::CommandPrefixOrSuffixItem::AssignmentWord(_, word) => {
                    words.push(self.word(&word.value, depth));
                }
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => redirects.push(redirect),
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                    self.compound_list(&subshell.0, depth + 1);
                    words.push(Word { text: "<(…)".into(), is_static: false });
                }
            }
        }
        for redirect in redirects {
            self.redirect(redirect, depth);
        }
        for (name, is_static) in &assignments {
            if name == "CDPATH" {
                // `cd d` may now go anywhere.
                self.cwd = None;
            }
            if !is_static {
                self.concern(format!("`{name}=…` has a value only known when it runs"));
            }
        }
        if words.is_empty() {
            // `X=1` alone sets a shell variable for the commands after it.
            for (name, _) in assignments.iter().filter(|(n, _)| !is_harmless_variable(n)) {
                self.concern(format!("sets {name} for the commands after it"));
            }
            return;
        }
        let texts: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let statics: Vec<bool> = words.iter().map(|w| w.is_static).collect();
        let shown = texts.join(" ");
        for (name, _) in assignments.iter().filter(|(n, _)| !is_harmless_variable(n)) {
            self.concern(format!("sets {name} for `{shown}`"));
        }
        if let Some(concern) = runs_other_code(&texts) {
            self.concern(concern);
        }
        let problem = self.judge(&texts, &statics);
        if statics[0] && base_name(&texts[0]) == "tee" {
            self.tee(&texts, &statics);
        }
        self.record_reads(&texts, &statics);
        self.runs(&texts, &statics, depth, 0);
        if matches!(texts[0].as_str(), "cd" | "pushd" | "popd") {
            self.change_directory(&texts, &statics);
        }
        let command = SimpleCommand { words: texts, dynamic_name: !statics[0], problem };
        // Substitutions found in the words were pushed while reading them;
        // the command itself goes before them, in source order.
        self.analysis.commands.insert(index.min(self.analysis.commands.len()), command);
    }

    /// Why the command is not read-only, if it is not.
    fn judge(&self, texts: &[String], statics: &[bool]) -> Option<String> {
        let shown = texts.join(" ");
        if !statics[0] {
            return Some(format!("the command name in `{shown}` is only known when it runs"));
        }
        if let Some(word) = texts.iter().zip(statics).find(|(_, s)| !**s).map(|(w, _)| w) {
            return Some(format!("`{shown}` has a word only known when it runs (`{word}`)"));
        }
        if base_name(&texts[0]) == "tee" && texts[0] == "tee" {
            // Its files are writes (edits), judged as redirections are.
            return judge::tee_targets(texts).err().map(|why| format!("`{shown}` is not known to be read-only: {why}"));
        }
        let ctx = judge::Context { cwd: self.cwd.as_deref(), roots: &self.env.roots };
        judge::read_only_problem(texts, ctx)
    }

    fn tee(&mut self, texts: &[String], statics: &[bool]) {
        if statics.iter().any(|s| !s) {
            self.concern(format!("`{}` writes to files only known when it runs", texts.join(" ")));
            return;
        }
        if let Ok(targets) = judge::tee_targets(texts) {
            for target in targets {
                self.write_target(&target, true);
            }
        }
    }

    /// Every static word that may name a path, resolved, for read deny
    /// rules: the word itself and the value of `--flag=VALUE`.
    fn record_reads(&mut self, texts: &[String], statics: &[bool]) {
        for (text, _) in texts.iter().zip(statics).skip(1).filter(|(_, s)| **s) {
            if self.analysis.reads.len() >= MAX_READS {
                return;
            }
            let mut candidates = vec![text.as_str()];
            if let Some((_, value)) = text.split_once('=') {
                candidates.push(value);
            }
            for candidate in candidates.into_iter().filter(|c| !c.is_empty()) {
                let base = match &self.cwd {
                    Some(cwd) => cwd.clone(),
                    None if Path::new(candidate).is_absolute() => PathBuf::from("/"),
                    None => continue,
                };
                let resolved = paths::resolve(&base, candidate);
                if !self.analysis.reads.contains(&resolved) {
                    self.analysis.reads.push(resolved);
                }
            }
        }
    }

    /// What the command runs, for deny rules: itself (by basename) and,
    /// unwrapped, whatever it wraps.
    fn runs(&mut self, texts: &[String], statics: &[bool], depth: usize, nesting: usize) {
        if nesting > MAX_DEPTH {
            self.unknown(format!("`{}` wraps commands more than {MAX_DEPTH} deep", texts.join(" ")));
            return;
        }
        if !statics[0] {
            self.unknown(format!("the command name in `{}` is only known when it runs", texts.join(" ")));
            return;
        }
        let mut words = texts.to_vec();
        words[0] = base_name(&texts[0]).to_string();
        self.analysis.runs.push(SimpleCommand { words, dynamic_name: false, problem: None });
        for inner in wrappers::inner(texts, statics) {
            match inner {
                Inner::Command(words, statics) => {
                    if !words.is_empty() {
                        self.runs(&words, &statics, depth, nesting + 1);
                    }
                }
                Inner::Script(script) => self.script(&script, depth + 1),
                Inner::Unknown(what) => self.unknown(what),
            }
        }
    }

    /// A script another command runs (`sh -c`, `eval`): its commands count
    /// for deny rules, its redirections for writes; the command that runs it
    /// is asked for its own reasons.
    fn script(&mut self, script: &str, depth: usize) {
        let mut inner = Walker { env: self.env, analysis: Analysis::default(), cwd: self.cwd.clone() };
        inner.program(script, depth);
        let found = inner.analysis;
        self.analysis.runs.extend(found.runs);
        for what in found.unknown {
            self.unknown(what);
        }
        for read in found.reads {
            if !self.analysis.reads.contains(&read) {
                self.analysis.reads.push(read);
            }
        }
        for write in found.writes {
            if !self.analysis.writes.contains(&write) {
                self.analysis.writes.push(write);
            }
        }
    }

    fn change_directory(&mut self, texts: &[String], statics: &[bool]) {
        let target = match (texts.first().map(String::as_str), texts.get(1)) {
            // `cd DIR` and `pushd DIR` with one static, plain folder; `cd -`,
            // `cd` (home), `pushd +1`, `popd` and flags are not followed.
            (Some("cd" | "pushd"), Some(dir))
                if texts.len() == 2 && statics[1] && !dir.starts_with(['-', '+']) && !dir.is_empty() =>
            {
                self.cwd.as_ref().map(|cwd| paths::resolve(cwd, dir))
            }
            _ => None,
        };
        self.cwd = target;
    }

    fn redirect(&mut self, redirect: &ast::IoRedirect, depth: usize) {
        match redirect {
            ast::IoRedirect::File(_, kind, target) => {
                let writes = matches!(
                    kind,
                    ast::IoFileRedirectKind::Write
                        | ast::IoFileRedirectKind::Append
                        | ast::IoFileRedirectKind::ReadAndWrite
                        | ast::IoFileRedirectKind::Clobber
                        | ast::IoFileRedirectKind::DuplicateOutput
                );
                let reads = matches!(kind, ast::IoFileRedirectKind::Read | ast::IoFileRedirectKind::ReadAndWrite);
                match target {
                    ast::IoFileRedirectTarget::Filename(word) => {
                        let word = self.word(&word.value, depth);
                        if writes {
                            self.write_target(&word.text, word.is_static);
                        }
                        if reads {
                            self.read_source(&word.text, word.is_static);
                        }
                    }
                    ast::IoFileRedirectTarget::Fd(_) => {}
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => self.compound_list(&subshell.0, depth + 1),
                    ast::IoFileRedirectTarget::Duplicate(word) => {
                        let word = self.word(&word.value, depth);
                        let is_fd = word.is_static && word.text.trim_end_matches('-').chars().all(|c| c.is_ascii_digit());
                        if !is_fd {
                            if writes {
                                self.write_target(&word.text, word.is_static);
                            } else {
                                self.read_source(&word.text, word.is_static);
                            }
                        }
                    }
                }
            }
            ast::IoRedirect::OutputAndError(word, _) => {
                let word = self.word(&word.value, depth);
                self.write_target(&word.text, word.is_static);
            }
            ast::IoRedirect::HereDocument(_, doc) => {
                let body = &doc.doc.value;
                if doc.requires_expansion && (body.contains('$') || body.contains('`')) {
                    self.concern("a here-document expands `$…` when it runs".into());
                    if body.contains("$(") || body.contains('`') {
                        self.unknown("a here-document runs a command substitution".into());
                    }
                }
            }
            ast::IoRedirect::HereString(_, word) => {
                if !self.word(&word.value, depth).is_static {
                    self.concern("a here-string with words only known when it runs".into());
                }
            }
        }
    }

    fn write_target(&mut self, target: &str, is_static: bool) {
        if !is_static {
            self.concern(format!("writes to `{target}`, a file only known when it runs"));
            return;
        }
        if matches!(target, "/dev/null" | "/dev/stdout" | "/dev/stderr") {
            return;
        }
        let Some(base) = self.base_for(target) else {
            self.concern(format!("writes to `{target}` after a `cd` whose folder is only known when it runs"));
            return;
        };
        let path = paths::resolve(&base, target);
        match paths::place_of(&path, &self.env.roots) {
            Place::Workspace => {
                let write = Write { shown: target.to_string(), path };
                if !self.analysis.writes.contains(&write) {
                    self.analysis.writes.push(write);
                }
            }
            Place::Protected(what) => {
                self.concern(format!("writes to `{target}` ({what})"));
                self.analysis.protected_writes.push(Write { shown: target.to_string(), path });
            }
            Place::Outside => self.concern(format!("writes to `{target}`, outside the workspace")),
        }
    }

    fn read_source(&mut self, source: &str, is_static: bool) {
        if !is_static {
            self.concern(format!("reads from `{source}`, a file only known when it runs"));
            return;
        }
        let Some(base) = self.base_for(source) else {
            self.concern(format!("reads from `{source}` after a `cd` whose folder is only known when it runs"));
            return;
        };
        let path = paths::resolve(&base, source);
        if paths::place_of(&path, &self.env.roots) == Place::Outside {
            self.concern(format!("reads from `{source}`, outside the workspace"));
        }
        if !self.analysis.reads.contains(&path) {
            self.analysis.reads.push(path);
        }
    }

    /// What a path is relative to (`None`: only known when it runs).
    fn base_for(&self, path: &str) -> Option<PathBuf> {
        if Path::new(path).is_absolute() {
            Some(PathBuf::from("/"))
        } else {
            self.cwd.clone()
        }
    }

    /// The word after quote removal, and whether it is static. Command
    /// substitutions inside it are analysed as commands of their own.
    fn word(&mut self, raw: &str, depth: usize) -> Word {
        match brush_parser::word::parse(raw, &parser_options()) {
            Ok(pieces) => {
                let mut text = String::new();
                let is_static = self.pieces(raw, &pieces, &mut text, depth, false);
                Word { text, is_static }
            }
            Err(_) => {
                self.concern(format!("the word `{raw}` could not be parsed"));
                Word { text: raw.to_string(), is_static: false }
            }
        }
    }

    fn pieces(&mut self, raw: &str, pieces: &[WordPieceWithSource], out: &mut String, depth: usize, quoted: bool) -> bool {
        let mut is_static = true;
        for WordPieceWithSource { piece, start_index, end_index } in pieces {
            match piece {
                WordPiece::Text(s) => {
                    // Unquoted, globs and braces expand; `~` after `=` or
                    // `:` is a tilde prefix to bash.
                    if !quoted && expands_unquoted(s, out) {
                        is_static = false;
                    }
                    out.push_str(s);
                }
                WordPiece::SingleQuotedText(s) => out.push_str(s),
                WordPiece::AnsiCQuotedText(s) => {
                    // `$'-\x64elete'`: what it stands for is decoded by bash.
                    is_static = false;
                    out.push_str(raw.get(*start_index..*end_index).unwrap_or(s));
                }
                WordPiece::EscapeSequence(s) => out.push_str(s.strip_prefix('\\').unwrap_or(s)),
                WordPiece::TildePrefix(s) => {
                    is_static = false;
                    out.push('~');
                    out.push_str(s);
                }
                WordPiece::DoubleQuotedSequence(inner) => {
                    is_static &= self.pieces(raw, inner, out, depth, true);
                }
                WordPiece::GettextDoubleQuotedSequence(inner) => {
                    // `$"…"` is translated when it runs.
                    self.pieces(raw, inner, out, depth, true);
                    is_static = false;
                }
                WordPiece::ParameterExpansion(_) => {
                    is_static = false;
                    out.push_str(raw.get(*start_index..*end_index).unwrap_or("$…"));
                }
                WordPiece::ArithmeticExpression(expr) => {
                    is_static = false;
                    out.push_str(raw.get(*start_index..*end_index).unwrap_or("$((…))"));
                    self.arithmetic(&expr.value);
                }
                WordPiece::CommandSubstitution(inner) => {
                    is_static = false;
                    out.push_str(&format!("$({inner})"));
                    self.program(inner, depth + 1);
                }
                WordPiece::BackquotedCommandSubstitution(inner) => {
                    is_static = false;
                    out.push_str(&format!("`{inner}`"));
                    self.program(&unescape_backquoted(inner), depth + 1);
                }
            }
        }
        is_static
    }
}

/// Unquoted text that bash expands: glob characters (`*`, `?`, `[`, and
/// extended globs), brace expansion (`{a,b}`, `{1..3}`), and a `~` after
/// `=` or `:` (or starting the word: `before` is the word so far).
fn expands_unquoted(text: &str, before: &str) -> bool {
    if text.contains(['*', '?', '[']) && !(before.is_empty() && matches!(text, "[" | "[[" | "]]")) {
        return true;
    }
    if text.contains(['(', ')']) {
        return true; // extended globs: `@(…)`, `!(…)`
    }
    if let Some(open) = text.find('{') {
        let rest = &text[open..];
        if rest.contains('}') && (rest.contains(',') || rest.contains("..")) {
            return true;
        }
    }
    let mut previous = before.chars().last();
    for c in text.chars() {
        if c == '~' && (previous.is_none() || matches!(previous, Some('=' | ':'))) {
            return true;
        }
        previous = Some(c);
    }
    false
}

/// Inside backquotes, `\$`, `` \` `` and `\\` stand for the character itself.
fn unescape_backquoted(inner: &str) -> String {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(&next) = chars.peek() {
                if matches!(next, '$' | '`' | '\\') {
                    out.push(next);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
}

fn assignment_name(assignment: &ast::Assignment) -> String {
    match &assignment.name {
        ast::AssignmentName::VariableName(name) => name.clone(),
        ast::AssignmentName::ArrayElementName(name, _) => name.clone(),
    }
}

/// Variables that change no program's behaviour in a way that matters for
/// safety (logging, colour, locale, backtraces).
fn is_harmless_variable(name: &str) -> bool {
    matches!(
        name,
        "RUST_LOG" | "RUST_BACKTRACE" | "RUST_LIB_BACKTRACE" | "CARGO_TERM_COLOR" | "NO_COLOR" | "FORCE_COLOR" | "CLICOLOR"
            | "TERM" | "LANG" | "LC_ALL" | "LC_CTYPE" | "TZ" | "CI"
    )
}

/// An interpreter with no script file reads its program from stdin.
fn reads_program_from_stdin(words: &[String]) -> bool {
    let rest: Vec<&String> = words.iter().skip(1).filter(|w| !w.starts_with('-') || w.as_str() == "-").collect();
    rest.is_empty() || rest.first().is_some_and(|w| w.as_str() == "-") || words.iter().any(|w| w == "-s")
}

/// Commands that run code given as text (or as another user), named for the prompt.
fn runs_other_code(words: &[String]) -> Option<String> {
    let name = base_name(words.first()?);
    let shown = words.join(" ");
    match name {
        "eval" => Some(format!("`{shown}` runs text as a command (eval)")),
        "exec" => Some(format!("`{shown}` replaces the shell (exec)")),
        "source" | "." => Some(format!("`{shown}` runs a script in this shell (source)")),
        "sudo" | "doas" | "su" | "pkexec" => Some(format!("`{shown}` runs as another user ({name})")),
        _ if is_interpreter(name) && words.iter().skip(1).any(|w| w == "-c" || w == "-e" || (w.starts_with('-') && !w.starts_with("--") && w.contains('c'))) => {
            Some(format!("`{shown}` runs code given as text ({name} -c)"))
        }
        _ => None,
    }
}
