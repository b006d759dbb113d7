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
use super::wrappers::{self, runs_what_it_holds, Inner};
use super::{base_name, is_interpreter, judge, Analysis, ShellEnv, SimpleCommand, Write, MAX_COMMAND_CHARS, MAX_DEPTH};

/// At most this many paths are kept for read deny rules per command.
const MAX_READS: usize = 4096;

pub fn analyze(command: &str, env: &ShellEnv) -> Analysis {
    let mut walker = Walker { env, analysis: Analysis::default(), probing: 0, cwd: Some(env.cwd.clone()) };
    walker.program(command, 0);
    walker.analysis
}

struct Walker<'a> {
    env: &'a ShellEnv,
    analysis: Analysis,
    /// How many loop probes this walk is inside (see [`Walker::looped`]).
    probing: usize,
    /// Where relative paths point after the `cd`s seen so far (`None`:
    /// only known when the command runs). A `cd` is followed only where it
    /// surely takes effect: to an existing folder, not after `||` or `&&`,
    /// not in a condition, a loop or a branch; a subshell's, a
    /// substitution's, a background job's and a pipeline part's end with
    /// them. Anything else makes the folder unknown for what follows.
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
        for ast::CompoundListItem(and_or, separator) in &list.0 {
            let before = self.cwd.clone();
            self.and_or(and_or, depth);
            // `cd x &` runs in a subshell of its own.
            if matches!(separator, ast::SeparatorOperator::Async) {
                self.cwd = before;
            }
        }
    }

    /// `a && b || c`: only the first part surely runs. A `cd` in a later
    /// part may not have run (or failed, after `||`): from there on, and
    /// after the list, the folder is unknown.
    fn and_or(&mut self, and_or: &ast::AndOrList, depth: usize) {
        let before = self.cwd.clone();
        self.pipeline(&and_or.first, depth);
        let mut changed_later = false;
        for next in &and_or.additional {
            let at = self.cwd.clone();
            if matches!(next, ast::AndOr::Or(_)) && at != before {
                // Runs when what came before failed: maybe its `cd`.
                self.cwd = None;
            }
            let (ast::AndOr::And(p) | ast::AndOr::Or(p)) = next;
            let start = self.cwd.clone();
            self.pipeline(p, depth);
            if self.cwd != start {
                changed_later = true;
                self.cwd = None;
            }
        }
        if changed_later {
            self.cwd = None;
        }
    }

    /// Walk `f` in a scope of its own (a subshell): its `cd`s end with it.
    fn scoped(&mut self, f: impl FnOnce(&mut Self)) {
        let before = self.cwd.clone();
        f(self);
        self.cwd = before;
    }

    /// Would walking `f` change the folder? (A probe on a copy: nothing of
    /// it is kept.)
    fn changes_folder(&self, f: impl FnOnce(&mut Walker<'_>)) -> bool {
        // Loops inside loops: past a few, assume they do (no exponential walk).
        if self.probing >= 3 {
            return true;
        }
        let mut probe = Walker { env: self.env, analysis: Analysis::default(), probing: self.probing + 1, cwd: self.cwd.clone() };
        f(&mut probe);
        probe.cwd != self.cwd
    }

    fn pipeline(&mut self, pipeline: &ast::Pipeline, depth: usize) {
        let before = self.cwd.clone();
        let parts = pipeline.seq.len();
        for (index, command) in pipeline.seq.iter().enumerate() {
            let first = self.analysis.commands.len();
            if parts > 1 {
                // Each part of a pipeline runs in a subshell, all from the
                // same folder; the last may run in this shell (lastpipe).
                self.cwd = before.clone();
                self.command(command, depth);
                if index + 1 < parts || self.cwd != before {
                    let last_changed = index + 1 == parts && self.cwd != before;
                    self.cwd = if last_changed { None } else { before.clone() };
                }
            } else {
                self.command(command, depth);
            }
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
                self.looped(|w| w.compound_list(&clause.body.0, depth));
            }
            ast::CompoundCommand::BraceGroup(group) => self.compound_list(&group.0, depth),
            ast::CompoundCommand::Subshell(subshell) => self.scoped(|w| w.compound_list(&subshell.0, depth)),
            ast::CompoundCommand::ForClause(clause) => {
                let mut all_static = true;
                for word in clause.values.iter().flatten() {
                    all_static &= self.word(&word.value, depth).is_static;
                }
                if !all_static {
                    self.concern(format!("the words of `for {}` are only known when it runs", clause.variable_name));
                }
                self.looped(|w| w.compound_list(&clause.body.0, depth));
            }
            ast::CompoundCommand::CaseClause(clause) => {
                let mut all_static = self.word(&clause.value.value, depth).is_static;
                let before = self.cwd.clone();
                let mut changed = false;
                for item in &clause.cases {
                    for pattern in &item.patterns {
                        all_static &= self.word(&pattern.value, depth).is_static;
                    }
                    if let Some(list) = &item.cmd {
                        // Each branch starts from the folder before the
                        // `case`: any of them may be the one that runs
                        // (`;&` falls through, which only asks more).
                        self.cwd = before.clone();
                        self.compound_list(list, depth);
                        changed |= self.cwd != before;
                    }
                }
                self.cwd = if changed { None } else { before };
                if !all_static {
                    self.concern("a `case` whose words are only known when it runs".into());
                }
            }
            ast::CompoundCommand::IfClause(clause) => {
                let before = self.cwd.clone();
                self.compound_list(&clause.condition, depth);
                // The `else` parts run when the condition failed, maybe
                // in its `cd`.
                let otherwise = if self.cwd != before { None } else { before.clone() };
                let mut changed = self.cwd != before;
                let start = self.cwd.clone();
                self.compound_list(&clause.then, depth);
                changed |= self.cwd != start;
                for other in clause.elses.iter().flatten() {
                    self.cwd = otherwise.clone();
                    if let Some(condition) = &other.condition {
                        self.compound_list(condition, depth);
                    }
                    let start = self.cwd.clone();
                    self.compound_list(&other.body, depth);
                    changed |= self.cwd != start || self.cwd != otherwise;
                }
                self.cwd = if changed { None } else { before };
            }
            ast::CompoundCommand::WhileClause(clause) | ast::CompoundCommand::UntilClause(clause) => {
                self.looped(|w| {
                    w.compound_list(&clause.0, depth);
                    w.compound_list(&clause.1 .0, depth);
                });
            }
        }
    }

    /// A loop's condition and body run any number of times: if they change
    /// the folder, every pass but the first runs elsewhere, so they are
    /// judged with the folder unknown (and so is what follows).
    fn looped(&mut self, body: impl Fn(&mut Walker<'_>)) {
        if self.changes_folder(&body) {
            self.cwd = None;
        }
        body(self);
    }

    /// Whether every word of the test is static.
    fn extended_test(&mut self, test: &ast::ExtendedTestExpr, depth: usize) -> bool {
        match test {
            ast::ExtendedTestExpr::And(a, b) | ast::ExtendedTestExpr::Or(a, b) => {
                let a = self.extended_test(a, depth);
                self.extended_test(b, depth) && a
            }
            ast::ExtendedTestExpr::Not(a) | ast::ExtendedTestExpr::Parenthesized(a) => self.extended_test(a, depth),
            ast::ExtendedTestExpr::UnaryTest(predicate, word) => {
                let word = self.word(&word.value, depth);
                if matches!(predicate, ast::UnaryPredicate::ShellVariableIsSetAndAssigned | ast::UnaryPredicate::ShellVariableIsSetAndNameRef) {
                    // `[[ -v 'a[$(cmd)]' ]]` evaluates the subscript.
                    self.variable_name(&word.text, "[[ -v … ]]");
                }
                word.is_static
            }
            ast::ExtendedTestExpr::BinaryTest(predicate, a, b) => {
                let a = self.word(&a.value, depth);
                let b = self.word(&b.value, depth);
                if is_arithmetic_comparison(predicate) {
                    // Both sides are evaluated as arithmetic, quoted or not:
                    // `[[ 'a[$(cmd)]' -eq 0 ]]` runs cmd.
                    for side in [&a, &b] {
                        if !side.is_static || !is_literal_number(&side.text) {
                            self.concern(format!("`[[ … {predicate} … ]]` evaluates `{}` as arithmetic when it runs", side.text));
                            self.unknown(format!("`[[ … {predicate} … ]]` evaluates `{}` as arithmetic, which can run a command", side.text));
                        }
                    }
                }
                a.is_static && b.is_static
            }
        }
    }

    /// Arithmetic evaluates the names in it, and a name's value may hold a
    /// subscript that runs a command (`x='a[$(…)]'; (( x ))`): only
    /// numbers and operators are harmless; anything else is a concern, and
    /// a command no deny rule can check.
    fn arithmetic(&mut self, expr: &str) {
        let harmless = expr.chars().all(|c| c.is_ascii_digit() || c.is_whitespace() || "+-*/%<>=!&|^~?:(),".contains(c));
        if !harmless {
            self.concern(format!("the arithmetic `{}` evaluates names when it runs", expr.trim()));
            self.unknown(format!("the arithmetic `{}` evaluates names, which can run a command", expr.trim()));
        }
    }

    /// A word a builtin takes as a variable name (`test -v`, `printf -v`,
    /// `read`, `declare`): a subscript in it is evaluated as arithmetic.
    fn variable_name(&mut self, word: &str, what: &str) {
        let name = word.split_once('=').map_or(word, |(name, _)| name);
        let plain = name.strip_suffix("+").unwrap_or(name);
        let plain = match plain.split_once('[') {
            Some((base, subscript)) => is_identifier(base) && subscript.strip_suffix(']').is_some_and(is_literal_number),
            None => is_identifier(plain) || plain.is_empty(),
        };
        if !plain {
            self.concern(format!("`{what}` evaluates the subscript of `{name}` when it runs"));
            self.unknown(format!("`{what}` evaluates the subscript of `{name}`, which can run a command"));
        }
    }

    /// Builtins that evaluate their words as arithmetic or as variable
    /// names, or run a name chosen when they run.
    fn evaluating_builtin(&mut self, texts: &[String], statics: &[bool]) {
        let name = texts[0].as_str();
        let shown = texts.join(" ");
        let args = &texts[1..];
        match name {
            "let" => args.iter().for_each(|arg| self.arithmetic(arg)),
            "test" | "[" => {
                for pair in args.windows(2) {
                    if matches!(pair[0].as_str(), "-v" | "-R") {
                        self.variable_name(&pair[1], &format!("{name} {}", pair[0]));
                    }
                }
            }
            "declare" | "typeset" | "local" | "export" | "readonly" => {
                let integer = args.iter().any(|a| a.starts_with('-') && a[1..].contains('i'));
                if integer {
                    self.concern(format!("`{shown}` makes a variable an integer: what is assigned to it is evaluated as arithmetic"));
                    self.unknown(format!("`{shown}` evaluates what is assigned as arithmetic, which can run a command"));
                }
                for arg in args.iter().filter(|a| !a.starts_with(['-', '+'])) {
                    self.variable_name(arg, name);
                }
            }
            "unset" | "read" | "mapfile" | "readarray" | "printf" | "wait" => {
                // Every operand that names a variable: unset's and read's
                // operands, printf's and wait's -v (mapfile's array).
                let mut index = 0;
                while index < args.len() {
                    let arg = &args[index];
                    index += 1;
                    if name == "printf" || name == "wait" {
                        if arg == "-v" {
                            if let Some(var) = args.get(index) {
                                self.variable_name(var, &format!("{name} -v"));
                            }
                        }
                        continue;
                    }
                    if !arg.starts_with('-') {
                        self.variable_name(arg, name);
                    } else if matches!(name, "mapfile" | "readarray") && arg.starts_with("-C") {
                        self.concern(format!("`{shown}` runs a callback (-C)"));
                        self.unknown(format!("`{shown}` runs the callback its -C names"));
                        index += usize::from(arg == "-C");
                    } else if matches!(arg.as_str(), "-a" | "-d" | "-n" | "-N" | "-p" | "-t" | "-u" | "-i" | "-O" | "-s" | "-c" | "-C") {
                        index += 1; // its value
                    }
                }
            }
            _ => {}
        }
        let _ = statics;
    }

    fn simple(&mut self, simple: &ast::SimpleCommand, depth: usize) {
        let mut assignments = Vec::new();
        let mut subscripts: Vec<String> = Vec::new();
        let mut redirects = Vec::new();
        let mut words: Vec<Word> = Vec::new();
        let index = self.analysis.commands.len();
        for item in simple.prefix.iter().flat_map(|p| p.0.iter()) {
            match item {
                ast::CommandPrefixOrSuffixItem::AssignmentWord(assignment, word) => {
                    let value = self.word(&word.value, depth);
                    assignments.push((assignment_name(assignment), value.is_static));
                    if let ast::AssignmentName::ArrayElementName(name, subscript) = &assignment.name {
                        subscripts.push(format!("{name}[{subscript}]"));
                    }
                }
                ast::CommandPrefixOrSuffixItem::IoRedirect(redirect) => redirects.push(redirect),
                ast::CommandPrefixOrSuffixItem::Word(word) => words.push(self.word(&word.value, depth)),
                ast::CommandPrefixOrSuffixItem::ProcessSubstitution(_, subshell) => {
                    self.scoped(|w| w.compound_list(&subshell.0, depth + 1));
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
                    self.scoped(|w| w.compound_list(&subshell.0, depth + 1));
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
            if let Some(why) = runs_what_it_holds(name) {
                self.unknown(format!("setting {name}: {why}"));
            }
        }
        for assignment in &subscripts {
            self.variable_name(assignment, "an assignment");
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
        if statics[0] {
            self.evaluating_builtin(&texts, &statics);
        }
        // `builtin cd` and `command cd` are `cd`.
        let skip = usize::from(matches!(texts[0].as_str(), "builtin" | "command") && texts.len() > 1 && !texts[1].starts_with('-'));
        match texts[skip].as_str() {
            "cd" | "pushd" | "popd" => self.change_directory(&texts[skip..], &statics[skip..]),
            // They run text in this shell, which may change its folder.
            "eval" | "source" | "." | "trap" | "alias" => self.cwd = None,
            _ => {}
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
            // `git show REV:PATH`: the path, from the repository's root.
            if base_name(&texts[0]) == "git" && !text.starts_with('-') {
                if let Some((_, path)) = text.split_once(':') {
                    if !path.is_empty() {
                        let resolved = paths::resolve(&self.env.cwd, path.trim_start_matches("./"));
                        if !self.analysis.reads.contains(&resolved) {
                            self.analysis.reads.push(resolved);
                        }
                    }
                }
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
        let mut inner = Walker { env: self.env, analysis: Analysis::default(), probing: self.probing, cwd: self.cwd.clone() };
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
                // `cd nowhere` fails and the shell stays where it was: only
                // a folder that exists is followed.
                self.cwd.as_ref().map(|cwd| paths::resolve(cwd, dir)).filter(|target| target.is_dir())
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
                    ast::IoFileRedirectTarget::ProcessSubstitution(_, subshell) => self.scoped(|w| w.compound_list(&subshell.0, depth + 1)),
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
                let mut is_static = self.pieces(raw, &pieces, &mut text, depth, false);
                // `$[…]`, the old spelling of `$((…))` (also inside single
                // quotes here, which only asks more).
                if let Some(at) = raw.find("$[") {
                    is_static = false;
                    let expr = raw[at + 2..].split(']').next().unwrap_or_default();
                    self.arithmetic(if expr.is_empty() { "$[" } else { expr });
                }
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
                    let text = raw.get(*start_index..*end_index).unwrap_or("${…}");
                    if let Some(why) = expansion_runs_code(text) {
                        self.unknown(format!("`{text}` {why}"));
                    }
                    out.push_str(text);
                }
                WordPiece::ArithmeticExpression(expr) => {
                    is_static = false;
                    out.push_str(raw.get(*start_index..*end_index).unwrap_or("$((…))"));
                    self.arithmetic(&expr.value);
                }
                WordPiece::CommandSubstitution(inner) => {
                    is_static = false;
                    out.push_str(&format!("$({inner})"));
                    self.scoped(|w| w.program(inner, depth + 1));
                }
                WordPiece::BackquotedCommandSubstitution(inner) => {
                    is_static = false;
                    out.push_str(&format!("`{inner}`"));
                    self.scoped(|w| w.program(&unescape_backquoted(inner), depth + 1));
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

/// `[[ a -eq b ]]` and the other arithmetic comparisons.
fn is_arithmetic_comparison(predicate: &ast::BinaryPredicate) -> bool {
    matches!(
        predicate,
        ast::BinaryPredicate::ArithmeticEqualTo
            | ast::BinaryPredicate::ArithmeticNotEqualTo
            | ast::BinaryPredicate::ArithmeticLessThan
            | ast::BinaryPredicate::ArithmeticLessThanOrEqualTo
            | ast::BinaryPredicate::ArithmeticGreaterThan
            | ast::BinaryPredicate::ArithmeticGreaterThanOrEqualTo
    )
}

/// `12`, `-3`, `+0`: a number bash evaluates to itself.
fn is_literal_number(text: &str) -> bool {
    let digits = text.trim().trim_start_matches(['+', '-']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit())
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Does a parameter expansion (as written) run code? A subscript, an
/// offset or length, indirection (`${!x}`) and `@P` evaluate what the
/// variable holds (`x='a[$(cmd)]'`); a command substitution inside it
/// (`${u:-$(cmd)}`) runs.
fn expansion_runs_code(text: &str) -> Option<&'static str> {
    let Some(inner) = text.strip_prefix("${").and_then(|t| t.strip_suffix('}')) else {
        return None; // `$x`, `$1`, `$@`
    };
    if inner.contains("$(") || inner.contains('`') || inner.contains("$[") {
        return Some("runs a command substitution inside it");
    }
    let body = inner.strip_prefix('#').filter(|b| !b.is_empty()).unwrap_or(inner);
    if body.starts_with('!') && body.len() > 1 && !body.ends_with(['@', '*']) {
        return Some("expands a name held in a variable (`${!x}`), evaluating any subscript in it, which can run a command");
    }
    if body.contains("@P") {
        return Some("expands the value as a prompt (`@P`), which can run a command");
    }
    let name_len = match body.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => body.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).unwrap_or(body.len()),
        Some(c) if c.is_ascii_digit() => body.find(|c: char| !c.is_ascii_digit()).unwrap_or(body.len()),
        Some(_) => 1,
        None => 0,
    };
    let mut rest = &body[name_len..];
    if let Some(after_bracket) = rest.strip_prefix('[') {
        let Some((subscript, after)) = after_bracket.split_once(']') else { return Some("has a subscript that does not close") };
        if !is_literal_number(subscript) && !matches!(subscript, "@" | "*") {
            return Some("evaluates a subscript as arithmetic, which can run a command");
        }
        rest = after;
    }
    if let Some(offsets) = rest.strip_prefix(':') {
        if !offsets.starts_with(['-', '=', '+', '?']) {
            // `${x:offset:length}`: both are arithmetic.
            let literal = |part: &str| {
                let part = part.trim();
                part.is_empty() || is_literal_number(part) || part.strip_prefix('(').and_then(|p| p.strip_suffix(')')).is_some_and(is_literal_number)
            };
            if !offsets.split(':').all(literal) {
                return Some("evaluates an offset or length as arithmetic, which can run a command");
            }
        }
    }
    // Expansions nested in the word after the operator (`${u:-${a[i]}}`).
    let mut from = 0;
    while let Some(at) = rest[from..].find("${") {
        let start = from + at;
        let mut level = 0;
        let mut end = None;
        for (offset, c) in rest[start..].char_indices() {
            match c {
                '{' => level += 1,
                '}' => {
                    level -= 1;
                    if level == 0 {
                        end = Some(start + offset + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { return Some("has an expansion that does not close") };
        if let Some(why) = expansion_runs_code(&rest[start..end]) {
            return Some(why);
        }
        from = end;
    }
    None
}
