//! Command knowledge as data: for each command Tandem may run unasked, the
//! flags known to be harmless, how many values each takes and of what kind,
//! how the command reads its options (GNU `getopt_long` with abbreviated
//! long options, or a parser without abbreviations), and what its operands
//! are. A flag that is not listed is not harmless: the command is asked.
//! That is the point of an allow-list — `sort --compress-program`,
//! `tree -o`, `fd -x`, `git grep -O` are simply absent.
//!
//! A flag is written as the command spells it, with its values after `=`:
//! `-n` takes none, `-e=` one text value, `-f=path` one path (checked to be
//! inside the workspace like an operand), `--arg=text,text` two, and
//! `--color=?` an optional value given only glued (`--color=never`, `-i?`).
//! `-NUM` admits `-5` (`head -5`).

/// How a command reads its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// GNU `getopt_long`: short options bundle (`-uo`), take glued values
    /// (`-oFILE`), long options may be abbreviated to a unique prefix
    /// (`--outp=`), options may follow operands, `--` ends them.
    Gnu,
    /// As `Gnu` but long options are never abbreviated (clap, lexopt).
    Exact,
    /// `find`: single-dash words, each with a fixed number of values; the
    /// starting points come first.
    Find,
    /// Every flag is harmless (`ps`): nothing to check but the operands.
    Any,
}

/// What a command's operands are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operands {
    /// Files or folders the command reads: each must be inside the workspace.
    Paths,
    /// At most this many paths (`uniq IN [OUT]`: a second one is written).
    AtMostPaths(usize),
    /// The first operand is a pattern or program unless one of these flags
    /// gave it (`grep -e`, `jq -f`); the rest are paths.
    PatternThenPaths(&'static [&'static str]),
    /// Text, not files (`echo`, `basename`, git revisions).
    Text,
    /// Text that must start with `+` (`date +%F`; `date 0101…` sets the clock).
    Format,
    /// None at all (`git branch NAME` would create a branch).
    None,
}

/// One command, or one subcommand of `git`.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    pub name: &'static str,
    pub syntax: Syntax,
    /// Groups of harmless flags (groups let subcommands share lists).
    pub flags: &'static [&'static [&'static str]],
    pub operands: Operands,
    /// The command has subcommands: the first operand must name one.
    pub subcommands: &'static [Spec],
    /// At least one of these must be given (`git config --get`), else the
    /// command does something else (writes the configuration).
    pub requires: &'static [&'static str],
}

const fn spec(name: &'static str, syntax: Syntax, flags: &'static [&'static [&'static str]], operands: Operands) -> Spec {
    Spec { name, syntax, flags, operands, subcommands: &[], requires: &[] }
}

const fn gnu(name: &'static str, flags: &'static [&'static [&'static str]], operands: Operands) -> Spec {
    spec(name, Syntax::Gnu, flags, operands)
}

const HELP: &[&str] = &["--help", "--version"];
const NONE: Operands = Operands::None;
const PATHS: Operands = Operands::Paths;
const TEXT: Operands = Operands::Text;

const LS: &[&str] = &[
    "-a", "-A", "-b", "-B", "-c", "-C", "-d", "-D", "-f", "-F", "-g", "-G", "-h", "-H", "-i", "-k", "-l", "-L", "-m", "-n", "-N", "-o",
    "-p", "-q", "-Q", "-r", "-R", "-s", "-S", "-t", "-u", "-U", "-v", "-x", "-X", "-Z", "-1", "-I=", "-T=", "-w=", "--all",
    "--almost-all", "--author", "--escape", "--ignore-backups", "--directory", "--dired", "--classify=?", "--file-type",
    "--group-directories-first", "--no-group", "--human-readable", "--si", "--dereference-command-line",
    "--dereference-command-line-symlink-to-dir", "--inode", "--kibibytes", "--dereference", "--numeric-uid-gid", "--literal",
    "--hide-control-chars", "--show-control-chars", "--quote-name", "--reverse", "--recursive", "--size", "--context", "--zero",
    "--full-time", "--block-size=", "--color=?", "--format=", "--hide=", "--ignore=", "--indicator-style=", "--quoting-style=",
    "--sort=", "--time=", "--time-style=", "--tabsize=", "--width=", "--hyperlink=?",
];
const CAT: &[&str] = &[
    "-A", "-b", "-e", "-E", "-n", "-s", "-t", "-T", "-u", "-v", "--show-all", "--number-nonblank", "--number", "--squeeze-blank",
    "--show-ends", "--show-tabs", "--show-nonprinting",
];
const HEAD: &[&str] = &["-c=", "-n=", "-q", "-v", "-z", "-NUM", "--bytes=", "--lines=", "--quiet", "--silent", "--verbose", "--zero-terminated"];
const WC: &[&str] = &["-c", "-m", "-l", "-L", "-w", "--bytes", "--chars", "--lines", "--max-line-length", "--words", "--total="];
const GREP: &[&str] = &[
    "-E", "-F", "-G", "-P", "-e=", "-f=path", "-i", "-y", "-v", "-w", "-x", "-c", "-L", "-l", "-m=", "-o", "-q", "-s", "-b", "-H", "-h",
    "-n", "-T", "-Z", "-z", "-A=", "-B=", "-C=", "-NUM", "-a", "-I", "-D=", "-d=", "-r", "-R", "-U", "--color=?", "--colour=?",
    "--label=", "--binary-files=", "--exclude=", "--exclude-from=path", "--exclude-dir=", "--include=", "--line-buffered",
    "--null-data", "--no-ignore-case", "--ignore-case", "--invert-match", "--word-regexp", "--line-regexp", "--count",
    "--files-without-match", "--files-with-matches", "--max-count=", "--only-matching", "--quiet", "--silent", "--no-messages",
    "--byte-offset", "--with-filename", "--no-filename", "--line-number", "--initial-tab", "--null", "--text", "--after-context=",
    "--before-context=", "--context=", "--recursive", "--dereference-recursive", "--extended-regexp", "--fixed-strings",
    "--basic-regexp", "--perl-regexp", "--regexp=", "--file=path", "--devices=", "--directories=",
];
const GREP_PATTERN: &[&str] = &["-e", "-f", "--regexp", "--file"];
/// ripgrep. Absent: `--pre` and `--pre-glob` (run a program on every
/// file), `-z`/`--search-zip` (runs decompressors), `--hostname-bin`.
const RG: &[&str] = &[
    "-e=", "-f=path", "-i", "-S", "-s", "-v", "-w", "-x", "-c", "-l", "-n", "-N", "-H", "-I", "-o", "-q", "-t=", "-T=", "-g=", "-.", "-u",
    "-L", "-A=", "-B=", "-C=", "-m=", "-d=", "-F", "-P", "-U", "-b", "-0", "-r=", "-M=", "-a", "-p", "-E=", "-j=", "-h", "-V",
    "--regexp=", "--file=path", "--ignore-case", "--smart-case", "--case-sensitive", "--invert-match", "--word-regexp",
    "--line-regexp", "--count", "--count-matches", "--files-with-matches", "--files-without-match", "--files", "--line-number",
    "--no-line-number", "--with-filename", "--no-filename", "--only-matching", "--quiet", "--type=", "--type-not=", "--glob=",
    "--iglob=", "--hidden", "--no-ignore", "--no-ignore-vcs", "--no-ignore-dot", "--no-ignore-global", "--no-ignore-parent",
    "--no-ignore-exclude", "--ignore-file=path", "--unrestricted", "--follow", "--after-context=", "--before-context=",
    "--context=", "--max-count=", "--max-depth=", "--maxdepth=", "--fixed-strings", "--pcre2", "--multiline", "--multiline-dotall",
    "--color=", "--colors=", "--heading", "--no-heading", "--json", "--vimgrep", "--column", "--byte-offset", "--null",
    "--null-data", "--replace=", "--sort=", "--sortr=", "--stats", "--trim", "--max-columns=", "--max-columns-preview",
    "--type-list", "--type-add=", "--text", "--binary", "--no-messages", "--debug", "--trace", "--passthru", "--pretty",
    "--no-config", "--engine=", "--one-file-system", "--no-unicode", "--crlf", "--encoding=", "--threads=", "--path-separator=",
    "--field-match-separator=", "--field-context-separator=", "--context-separator=", "--no-context-separator", "--help",
    "--version", "--max-filesize=", "--mmap", "--no-mmap", "--hyperlink-format=",
];
const RG_PATTERN: &[&str] = &["-e", "-f", "--regexp", "--file", "--files", "--type-list"];
/// fd. Absent: `-x`/`--exec`, `-X`/`--exec-batch` (run commands), `-l`
/// (runs `ls`).
const FD: &[&str] = &[
    "-H", "-I", "-u", "-s", "-i", "-g", "-F", "-a", "-L", "-p", "-0", "-d=", "-t=", "-e=", "-E=", "-c=", "-S=", "-o=", "-1", "-q", "-j=",
    "-h", "-V", "--hidden", "--no-ignore", "--no-ignore-vcs", "--no-ignore-parent", "--unrestricted", "--case-sensitive",
    "--ignore-case", "--glob", "--regex", "--fixed-strings", "--absolute-path", "--relative-path", "--follow", "--full-path",
    "--print0", "--max-depth=", "--min-depth=", "--exact-depth=", "--type=", "--extension=", "--exclude=", "--color=", "--size=",
    "--changed-within=", "--changed-before=", "--owner=", "--max-results=", "--quiet", "--show-errors", "--base-directory=path",
    "--path-separator=", "--one-file-system", "--prune", "--threads=", "--format=", "--ignore-file=path", "--help", "--version",
];
/// tree. Absent: `-o` (writes a file), `-R` (writes `00Tree.html` files).
const TREE: &[&str] = &[
    "-a", "-d", "-l", "-f", "-x", "-L=", "-P=", "-I=", "-i", "-q", "-N", "-Q", "-p", "-u", "-g", "-s", "-h", "-D", "-F", "-v", "-t", "-c",
    "-U", "-r", "-n", "-C", "-A", "-S", "-J", "-X", "--gitignore", "--ignore-case", "--matchdirs", "--prune", "--noreport", "--si",
    "--du", "--timefmt=", "--inodes", "--device", "--dirsfirst", "--filesfirst", "--sort=", "--charset=", "--filelimit=",
];
/// find's expression words. Absent: `-exec`, `-execdir`, `-ok`, `-okdir`
/// (run commands), `-delete`, `-fprint`, `-fprint0`, `-fprintf`, `-fls`
/// (delete or write files).
const FIND: &[&str] = &[
    "-H", "-L", "-P", "-name=", "-iname=", "-path=", "-ipath=", "-wholename=", "-iwholename=", "-regex=", "-iregex=", "-regextype=",
    "-lname=", "-ilname=", "-type=", "-xtype=", "-maxdepth=", "-mindepth=", "-size=", "-mtime=", "-atime=", "-ctime=", "-mmin=",
    "-amin=", "-cmin=", "-newer=path", "-anewer=path", "-cnewer=path", "-newermt=", "-samefile=path", "-user=", "-group=", "-uid=",
    "-gid=", "-perm=", "-links=", "-inum=", "-used=", "-printf=", "-print", "-print0", "-ls", "-prune", "-quit", "-not", "!", "-a",
    "-and", "-o", "-or", "(", ")", ",", "-empty", "-readable", "-writable", "-executable", "-nouser", "-nogroup", "-true", "-false",
    "-depth", "-d", "-follow", "-xdev", "-mount", "-noleaf", "-ignore_readdir_race", "-noignore_readdir_race", "-daystart",
    "-help", "--help", "-version", "--version",
];
/// sort. Absent: `-o`/`--output` (writes), `--compress-program` (runs
/// it), `-T`/`--temporary-directory` (writes there), `--files0-from`.
const SORT: &[&str] = &[
    "-b", "-d", "-f", "-g", "-i", "-M", "-h", "-n", "-R", "-r", "-V", "-c", "-C", "-m", "-s", "-u", "-z", "-k=", "-t=", "-S=",
    "--ignore-leading-blanks", "--dictionary-order", "--ignore-case", "--general-numeric-sort", "--ignore-nonprinting",
    "--month-sort", "--human-numeric-sort", "--numeric-sort", "--random-sort", "--random-source=path", "--reverse",
    "--sort=", "--version-sort", "--batch-size=", "--check=?", "--debug", "--key=", "--merge", "--stable", "--buffer-size=",
    "--field-separator=", "--parallel=", "--unique", "--zero-terminated",
];
const UNIQ: &[&str] = &[
    "-c", "-d", "-D", "-f=", "-i", "-s=", "-u", "-w=", "-z", "--count", "--repeated", "--all-repeated=?", "--skip-fields=",
    "--ignore-case", "--skip-chars=", "--unique", "--check-chars=", "--zero-terminated", "--group=?",
];
const CUT: &[&str] = &[
    "-b=", "-c=", "-d=", "-f=", "-n", "-s", "-z", "--complement", "--output-delimiter=", "--bytes=", "--characters=", "--delimiter=",
    "--fields=", "--only-delimited", "--zero-terminated",
];
const TR: &[&str] = &["-c", "-C", "-d", "-s", "-t", "--complement", "--delete", "--squeeze-repeats", "--truncate-set1"];
const STAT: &[&str] = &["-L", "-f", "-t", "-c=", "--format=", "--printf=", "--terse", "--dereference", "--file-system", "--cached="];
const DU: &[&str] = &[
    "-a", "-b", "-c", "-h", "-H", "-k", "-L", "-m", "-s", "-S", "-x", "-P", "-l", "-0", "-D", "-d=", "-t=", "--max-depth=",
    "--apparent-size", "--summarize", "--human-readable", "--total", "--exclude=", "--threshold=", "--time=?", "--time-style=",
    "--si", "--inodes", "--bytes", "--count-links", "--dereference", "--dereference-args", "--no-dereference", "--null",
    "--one-file-system", "--separate-dirs", "--block-size=",
];
const DF: &[&str] = &[
    "-a", "-h", "-H", "-i", "-k", "-l", "-P", "-T", "-t=", "-x=", "-B=", "--all", "--human-readable", "--si", "--inodes", "--local",
    "--portability", "--print-type", "--total", "--type=", "--exclude-type=", "--output=?", "--block-size=", "--sync", "--no-sync",
];
const DIFF: &[&str] = &[
    "-q", "-s", "-c", "-C=", "-u", "-U=", "-e", "-n", "-y", "-W=", "-p", "-F=", "-i", "-E", "-Z", "-b", "-w", "-B", "-I=", "-a", "-r",
    "-N", "-x=", "-X=path", "-S=", "-t", "-T", "-l", "-d", "--brief", "--report-identical-files", "--context=?", "--unified=?",
    "--ed", "--normal", "--rcs", "--side-by-side", "--width=", "--show-c-function", "--show-function-line=", "--label=",
    "--expand-tabs", "--initial-tab", "--suppress-common-lines", "--suppress-blank-empty", "--left-column", "--ignore-case",
    "--ignore-tab-expansion", "--ignore-trailing-space", "--ignore-space-change", "--ignore-all-space", "--ignore-blank-lines",
    "--ignore-matching-lines=", "--strip-trailing-cr", "--text", "--recursive", "--new-file", "--unidirectional-new-file",
    "--exclude=", "--exclude-from=path", "--starting-file=", "--from-file=path", "--to-file=path", "--minimal",
    "--speed-large-files", "--horizon-lines=", "--color=?", "--no-dereference", "--ignore-file-name-case",
    "--no-ignore-file-name-case", "--tabsize=", "--palette=",
];
const CMP: &[&str] = &["-b", "-l", "-s", "-n=", "-i=", "--print-bytes", "--verbose", "--quiet", "--silent", "--bytes=", "--ignore-initial="];
const REALPATH: &[&str] = &[
    "-e", "-m", "-s", "-q", "-z", "-L", "-P", "--canonicalize-existing", "--canonicalize-missing", "--logical", "--physical",
    "--quiet", "--strip", "--no-symlinks", "--zero", "--relative-to=path", "--relative-base=path",
];
const READLINK: &[&str] = &[
    "-f", "-e", "-m", "-n", "-q", "-s", "-v", "-z", "--canonicalize", "--canonicalize-existing", "--canonicalize-missing",
    "--no-newline", "--quiet", "--silent", "--verbose", "--zero",
];
const UNAME: &[&str] = &[
    "-a", "-s", "-n", "-r", "-v", "-m", "-p", "-i", "-o", "--all", "--kernel-name", "--nodename", "--kernel-release",
    "--kernel-version", "--machine", "--processor", "--hardware-platform", "--operating-system",
];
const ID: &[&str] = &["-a", "-Z", "-g", "-G", "-n", "-r", "-u", "-z", "--context", "--group", "--groups", "--name", "--real", "--user", "--zero"];
/// date. Absent: `-s`/`--set` (sets the clock).
const DATE: &[&str] = &[
    "-u", "-R", "-I=?", "-d=", "-r=path", "-f=path", "--utc", "--universal", "--rfc-email", "--iso-8601=?", "--rfc-3339=", "--date=",
    "--reference=path", "--file=path", "--debug", "--resolution",
];
const SEQ: &[&str] = &["-f=", "-s=", "-w", "--format=", "--separator=", "--equal-width"];
/// The checksum tools. Absent: `-c`/`--check` (reads the files a list names).
const SUM: &[&str] = &[
    "-b", "-t", "-z", "--binary", "--text", "--tag", "--untagged", "--zero", "-l=", "--length=", "-a=", "--algorithm=", "--base64",
    "--raw",
];
const COLUMN: &[&str] = &[
    "-t", "-s=", "-c=", "-x", "-n", "-o=", "-N=", "-R=", "-J", "-e", "-L", "-r=", "-H=", "-O=", "-E=", "-W=", "--table", "--separator=",
    "--output-separator=", "--fillrows", "--json", "--table-columns=", "--table-right=", "--table-name=",
];
const TAC: &[&str] = &["-b", "-r", "-s=", "--before", "--regex", "--separator="];
const COMM: &[&str] = &["-1", "-2", "-3", "-z", "--check-order", "--nocheck-order", "--output-delimiter=", "--total", "--zero-terminated"];
const PASTE: &[&str] = &["-d=", "-s", "-z", "--delimiters=", "--serial", "--zero-terminated"];
const FOLD: &[&str] = &["-b", "-s", "-w=", "--bytes", "--spaces", "--width="];
const EXPAND: &[&str] = &["-i", "-t=", "-a", "--initial", "--tabs=", "--all", "--first-only"];
const JOIN: &[&str] = &[
    "-a=", "-e=", "-i", "-j=", "-o=", "-t=", "-v=", "-1=", "-2=", "-z", "--check-order", "--nocheck-order", "--header", "--ignore-case",
    "--zero-terminated",
];
const STRINGS: &[&str] = &[
    "-a", "-d", "-f", "-n=", "-NUM", "-t=", "-e=", "-w", "-s=", "-U=", "--all", "--data", "--print-file-name", "--bytes=",
    "--radix=", "--encoding=", "--include-all-whitespace", "--output-separator=", "--unicode=",
];
const NL: &[&str] = &["-b=", "-d=", "-f=", "-h=", "-i=", "-l=", "-n=", "-p", "-s=", "-v=", "-w="];
const OD: &[&str] = &[
    "-A=", "-j=", "-N=", "-S=", "-t=", "-v", "-w=?", "-a", "-b", "-c", "-d", "-f", "-i", "-l", "-o", "-s", "-x", "--address-radix=",
    "--endian=", "--skip-bytes=", "--read-bytes=", "--strings=?", "--format=", "--output-duplicates", "--width=?", "--traditional",
];
const HEXDUMP: &[&str] = &["-b", "-c", "-C", "-d", "-o", "-x", "-v", "-L", "-e=", "-f=path", "-n=", "-s=", "--canonical", "--length=", "--skip="];
/// jq. Absent: `--args`/`--jsonargs` (the operands become values).
const JQ: &[&str] = &[
    "-r", "-j", "-a", "-c", "-n", "-e", "-s", "-S", "-C", "-M", "-R", "-f=path", "-L=path", "--tab", "--indent=", "--arg=text,text",
    "--argjson=text,text", "--slurpfile=text,path", "--rawfile=text,path", "--from-file=path", "--seq", "--stream",
    "--stream-errors", "--raw-input", "--ascii-output", "--raw-output", "--raw-output0", "--join-output", "--compact-output",
    "--null-input", "--exit-status", "--slurp", "--sort-keys", "--color-output", "--monochrome-output", "--unbuffered",
];
const JQ_PROGRAM: &[&str] = &["-f", "--from-file"];
/// file. Absent: `-C` (writes a compiled magic file), `-z`/`-Z` (run
/// decompressors).
const FILE: &[&str] = &[
    "-b", "-i", "-L", "-h", "-k", "-E", "-N", "-0", "-r", "-s", "-p", "-e=", "-F=", "-m=path", "-P=", "--brief", "--mime",
    "--mime-type", "--mime-encoding", "--dereference", "--no-dereference", "--keep-going", "--no-pad", "--print0", "--raw",
    "--special-files", "--preserve-date", "--exclude=", "--separator=", "--magic-file=path", "--parameter=", "--extension",
    "--apple",
];
const NM: &[&str] = &[
    "-A", "-a", "-B", "-C", "-D", "-g", "-l", "-n", "-o", "-P", "-p", "-r", "-S", "-s", "-u", "-U", "-v", "-j", "-t=", "--format=",
    "--radix=", "--demangle=?", "--dynamic", "--defined-only", "--undefined-only", "--extern-only", "--line-numbers",
    "--numeric-sort", "--no-sort", "--portability", "--print-file-name", "--print-size", "--size-sort", "--reverse-sort",
    "--print-armap", "--special-syms", "--without-symbol-versions",
];
const OBJDUMP: &[&str] = &[
    "-a", "-d", "-D", "-f", "-g", "-h", "-x", "-p", "-r", "-R", "-s", "-S", "-t", "-T", "-C", "-l", "-w", "-z", "-G", "-W", "-j=", "-M=",
    "--archive-headers", "--disassemble=?", "--disassemble-all", "--file-headers", "--section-headers", "--headers",
    "--all-headers", "--private-headers", "--reloc", "--dynamic-reloc", "--full-contents", "--source", "--syms",
    "--dynamic-syms", "--demangle=?", "--line-numbers", "--wide", "--section=", "--disassembler-options=", "--no-show-raw-insn",
    "--start-address=", "--stop-address=", "--dwarf=?", "--visualize-jumps=?", "--no-addresses",
];
const READELF: &[&str] = &[
    "-a", "-h", "-l", "-S", "-g", "-t", "-e", "-s", "-n", "-r", "-u", "-d", "-V", "-A", "-I", "-W", "-C", "-D", "-x=", "-p=", "-R=",
    "--all", "--file-header", "--program-headers", "--segments", "--section-headers", "--sections", "--section-groups",
    "--section-details", "--headers", "--syms", "--symbols", "--dyn-syms", "--notes", "--relocs", "--unwind", "--dynamic",
    "--version-info", "--arch-specific", "--histogram", "--wide", "--demangle=?", "--use-dynamic", "--hex-dump=",
    "--string-dump=", "--relocated-dump=", "--debug-dump=?",
];
const SIZE: &[&str] = &["-A", "-B", "-G", "-d", "-o", "-x", "-t", "--format=", "--radix=", "--totals", "--common"];
const CD: &[&str] = &["-L", "-P"];
const VERSION_ONLY: &[&str] = &["--version", "-V"];

/// Flags every `git` subcommand that shows history or diffs shares.
/// Absent: `--output` (writes a file), `--ext-diff`, `--textconv` (run
/// programs), `--no-index` (compares any files), `--show-signature` (runs gpg).
const GIT_LOG: &[&str] = &[
    "-p", "-u", "-s", "-n=", "-NUM", "-i", "-L=", "-M=?", "-C=?", "-R", "-w", "-b", "-a", "-z", "-G=", "-S=", "--patch",
    "--no-patch", "--oneline", "--stat=?", "--shortstat", "--numstat", "--name-only", "--name-status", "--raw", "--graph",
    "--decorate=?", "--no-decorate", "--abbrev-commit", "--no-abbrev-commit", "--abbrev=?", "--format=", "--pretty=?",
    "--max-count=", "--skip=", "--since=", "--until=", "--after=", "--before=", "--author=", "--committer=", "--grep=", "--all",
    "--branches=?", "--tags=?", "--remotes=?", "--reverse", "--first-parent", "--merges", "--no-merges", "--follow", "--date=",
    "--relative-date", "--color=?", "--no-color", "--word-diff=?", "--word-diff-regex=", "--color-words=?", "--cached",
    "--staged", "--unified=", "--find-renames=?", "--find-copies=?", "--diff-filter=", "--ignore-all-space",
    "--ignore-space-change", "--ignore-space-at-eol", "--ignore-blank-lines", "--summary", "--full-index", "--binary", "--check",
    "--exit-code", "--quiet", "--no-ext-diff", "--no-textconv", "--topo-order", "--date-order", "--author-date-order",
    "--left-right", "--cherry-pick", "--cherry-mark", "--ancestry-path", "--simplify-by-decoration", "--source",
    "--pickaxe-regex", "--pickaxe-all", "--no-renames", "--histogram", "--patience", "--minimal", "--diff-algorithm=",
    "--submodule=?", "--dirstat=?", "--compact-summary", "--relative=?", "--no-relative", "--text", "--full-diff",
    "--log-size", "--notes=?", "--no-notes", "--boundary", "--mailmap", "--use-mailmap", "--no-mailmap", "--invert-grep",
    "--all-match", "--regexp-ignore-case", "--extended-regexp", "--fixed-strings", "--perl-regexp", "--count", "--objects",
    "--no-walk=?", "--do-walk", "--children", "--parents", "--merge", "--dense", "--sparse", "--full-history", "--indent-heuristic",
    "--function-context", "-W", "--inter-hunk-context=", "--no-prefix", "--src-prefix=", "--dst-prefix=", "--line-prefix=",
    "--ita-invisible-in-index", "--stat-width=", "--stat-name-width=", "--stat-count=", "-m", "-c", "--cc", "--remerge-diff",
    "--diff-merges=", "--no-diff-merges", "--expand-tabs=?", "--no-expand-tabs", "--show-notes=?", "--encoding=", "--max-age=",
    "--min-age=", "--min-parents=", "--max-parents=", "--no-min-parents", "--no-max-parents", "--exclude=", "--glob=",
    "--ignore-submodules=?", "--anchored=", "--color-moved=?", "--no-color-moved", "--color-moved-ws=", "--ws-error-highlight=",
    "--break-rewrites=?", "--irreversible-delete", "-D", "--find-copies-harder", "--rename-empty", "--no-rename-empty",
];
const GIT_STATUS: &[&str] = &[
    "-s", "-b", "-u=?", "-z", "-v", "--short", "--branch", "--porcelain=?", "--long", "--untracked-files=?", "--ignored=?",
    "--ignore-submodules=?", "--column=?", "--no-column", "--ahead-behind", "--no-ahead-behind", "--renames", "--no-renames",
    "--find-renames=?", "--verbose", "--show-stash",
];
const GIT_BLAME: &[&str] = &[
    "-L=", "-l", "-t", "-p", "-c", "-s", "-e", "-w", "-n", "-f", "-b", "-M=?", "-C=?", "--porcelain", "--line-porcelain",
    "--incremental", "--root", "--show-stats", "--date=", "--show-number", "--show-name", "--show-email", "--since=",
    "--abbrev=?", "--color-lines", "--color-by-age", "--ignore-rev=", "--ignore-revs-file=path", "--reverse=", "--first-parent",
    "--progress", "--no-progress", "--minimal", "--encoding=", "--contents=path",
];
const GIT_REV_PARSE: &[&str] = &[
    "--show-toplevel", "--abbrev-ref=?", "--verify", "--short=?", "--git-dir", "--absolute-git-dir", "--git-common-dir",
    "--is-inside-work-tree", "--is-inside-git-dir", "--is-bare-repository", "--is-shallow-repository", "--show-prefix",
    "--show-cdup", "--show-superproject-working-tree", "--symbolic", "--symbolic-full-name", "--all", "--branches=?",
    "--tags=?", "--remotes=?", "-q", "--quiet", "--default=", "--revs-only", "--no-revs", "--flags", "--no-flags", "--sq",
    "--not", "--shared-index-path", "--show-object-format=?", "--show-ref-format", "--local-env-vars", "--path-format=",
    "--since=", "--until=", "--after=", "--before=",
];
const GIT_LS_FILES: &[&str] = &[
    "-c", "-d", "-m", "-o", "-i", "-s", "-u", "-k", "-z", "-t", "-v", "-f", "-x=", "-X=path", "--cached", "--deleted", "--modified",
    "--others", "--ignored", "--stage", "--unmerged", "--killed", "--exclude=", "--exclude-from=path", "--exclude-per-directory=",
    "--exclude-standard", "--error-unmatch", "--full-name", "--recurse-submodules", "--abbrev=?", "--format=", "--deduplicate",
    "--directory", "--no-empty-directory", "--eol", "--sparse", "--debug",
];
const GIT_LS_TREE: &[&str] = &[
    "-d", "-r", "-t", "-l", "-z", "--name-only", "--name-status", "--object-only", "--full-name", "--full-tree", "--abbrev=?",
    "--format=", "--long",
];
const GIT_DESCRIBE: &[&str] = &[
    "--all", "--tags", "--contains", "--abbrev=", "--candidates=", "--exact-match", "--debug", "--long", "--match=", "--exclude=",
    "--always", "--first-parent", "--dirty=?", "--broken=?",
];
const GIT_SHORTLOG: &[&str] = &["-n", "-s", "-e", "-c", "-w=?", "--numbered", "--summary", "--email", "--committer", "--group=", "--format="];
/// Absent: `--textconv`, `--filters` (run configured programs).
const GIT_CAT_FILE: &[&str] = &[
    "-t", "-s", "-e", "-p", "-Z", "--batch=?", "--batch-check=?", "--batch-command=?", "--batch-all-objects", "--follow-symlinks",
    "--buffer", "--unordered", "--allow-unknown-type", "--use-mailmap", "--no-use-mailmap",
];
/// Absent: `-O`/`--open-files-in-pager` (runs a program), `--no-index`,
/// `--textconv`.
const GIT_GREP: &[&str] = &[
    "-i", "-v", "-w", "-n", "-l", "-L", "-c", "-h", "-H", "-e=", "-E", "-F", "-G", "-P", "-r", "-o", "-q", "-z", "-A=", "-B=", "-C=", "-NUM",
    "-W", "-p", "-I", "-a", "-f=path", "-m=", "--cached", "--untracked", "--recurse-submodules", "--max-depth=", "--only-matching",
    "--and", "--or", "--not", "--all-match", "--function-context", "--show-function", "--heading", "--break", "--color=?",
    "--no-color", "--column", "--full-name", "--threads=", "--exclude-standard", "--no-exclude-standard", "--ignore-case",
    "--invert-match", "--word-regexp", "--line-number", "--files-with-matches", "--name-only", "--files-without-match",
    "--count", "--null", "--quiet", "--extended-regexp", "--fixed-strings", "--basic-regexp", "--perl-regexp", "--text",
    "--after-context=", "--before-context=", "--context=", "--max-count=", "--no-textconv",
];
const GIT_MERGE_BASE: &[&str] = &["-a", "--all", "--octopus", "--independent", "--is-ancestor", "--fork-point"];
const GIT_SHOW_REF: &[&str] = &["--heads", "--branches", "--tags", "--head", "-d", "--dereference", "-s", "--hash=?", "--verify", "--abbrev=?", "-q", "--quiet", "--exists"];
const GIT_COUNT_OBJECTS: &[&str] = &["-v", "-H", "--verbose", "--human-readable"];
const GIT_BRANCH: &[&str] = &[
    "-a", "-r", "-v", "-l", "-i", "--list", "--all", "--show-current", "--remotes", "--contains=?", "--no-contains=?",
    "--merged=?", "--no-merged=?", "--sort=", "--format=", "--color=?", "--no-color", "--column=?", "--no-column",
    "--points-at=", "--ignore-case", "--abbrev=?", "--no-abbrev", "--verbose",
];
const GIT_TAG: &[&str] = &["-l", "-n=?", "-i", "--list", "--sort=", "--contains=?", "--no-contains=?", "--points-at=", "--merged=?", "--no-merged=?", "--format=", "--column=?", "--no-column", "--ignore-case", "--color=?"];
const GIT_REMOTE: &[&str] = &["-v", "--verbose"];
/// `git config` reads only with one of the reading flags (`requires`).
const GIT_CONFIG: &[&str] = &[
    "-l", "-z", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--show-origin", "--show-scope", "--global",
    "--local", "--system", "--worktree", "--name-only", "--null", "--type=", "--bool", "--int", "--path", "--default=", "--includes",
    "--no-includes",
];

const fn git_sub(name: &'static str, flags: &'static [&'static [&'static str]], operands: Operands) -> Spec {
    spec(name, Syntax::Gnu, flags, operands)
}

const GIT_SUBCOMMANDS: &[Spec] = &[
    git_sub("status", &[GIT_STATUS], PATHS),
    git_sub("diff", &[GIT_LOG], TEXT),
    git_sub("log", &[GIT_LOG], TEXT),
    git_sub("show", &[GIT_LOG], TEXT),
    git_sub("whatchanged", &[GIT_LOG], TEXT),
    git_sub("rev-list", &[GIT_LOG], TEXT),
    git_sub("shortlog", &[GIT_SHORTLOG], TEXT),
    git_sub("blame", &[GIT_BLAME], TEXT),
    git_sub("rev-parse", &[GIT_REV_PARSE], TEXT),
    git_sub("ls-files", &[GIT_LS_FILES], PATHS),
    git_sub("ls-tree", &[GIT_LS_TREE], TEXT),
    git_sub("describe", &[GIT_DESCRIBE], TEXT),
    git_sub("cat-file", &[GIT_CAT_FILE], TEXT),
    git_sub("grep", &[GIT_GREP], Operands::PatternThenPaths(&["-e", "-f"])),
    git_sub("merge-base", &[GIT_MERGE_BASE], TEXT),
    git_sub("show-ref", &[GIT_SHOW_REF], TEXT),
    git_sub("count-objects", &[GIT_COUNT_OBJECTS], NONE),
    git_sub("branch", &[GIT_BRANCH], NONE),
    git_sub("tag", &[GIT_TAG], NONE),
    git_sub("remote", &[GIT_REMOTE], NONE),
    Spec { name: "reflog", syntax: Syntax::Gnu, flags: &[GIT_LOG], operands: NONE, subcommands: GIT_REFLOG, requires: &[] },
    Spec { name: "stash", syntax: Syntax::Gnu, flags: &[], operands: NONE, subcommands: GIT_STASH, requires: &[] },
    Spec { name: "config", syntax: Syntax::Gnu, flags: &[GIT_CONFIG], operands: TEXT, subcommands: &[], requires: &["-l", "--list", "--get", "--get-all", "--get-regexp", "--get-urlmatch"] },
    git_sub("help", &[&["-a", "-g", "--all", "--guides"]], TEXT),
    git_sub("version", &[&["--build-options"]], NONE),
];
const GIT_REFLOG: &[Spec] = &[git_sub("show", &[GIT_LOG], TEXT)];
const GIT_STASH: &[Spec] = &[git_sub("list", &[GIT_LOG], NONE), git_sub("show", &[GIT_LOG], TEXT)];

/// `git`'s own options before the subcommand. Absent: `-c`, `--exec-path`,
/// `--config-env`, `-C`, `--git-dir`, `--work-tree` (make any subcommand
/// run code or act on another repository).
const GIT: &[&str] = &["--no-pager", "-P", "--no-optional-locks", "--literal-pathspecs", "--no-replace-objects", "--version", "--help"];

/// The commands judged read-only when every flag is in their list and
/// every operand is as their [`Operands`] say. Commands absent here —
/// `cargo check` (it compiles and runs `build.rs`), `make`, interpreters,
/// `less` (runs `LESSOPEN`), `ldd` (may run the program), `xargs`, `env`
/// — are asked.
pub const COMMANDS: &[Spec] = &[
    gnu("ls", &[LS, HELP], PATHS),
    gnu("dir", &[LS, HELP], PATHS),
    gnu("cat", &[CAT, HELP], PATHS),
    gnu("head", &[HEAD, HELP], PATHS),
    gnu("tail", &[HEAD, HELP], PATHS),
    gnu("wc", &[WC, HELP], PATHS),
    gnu("grep", &[GREP, HELP], Operands::PatternThenPaths(GREP_PATTERN)),
    gnu("egrep", &[GREP, HELP], Operands::PatternThenPaths(GREP_PATTERN)),
    gnu("fgrep", &[GREP, HELP], Operands::PatternThenPaths(GREP_PATTERN)),
    spec("rg", Syntax::Exact, &[RG], Operands::PatternThenPaths(RG_PATTERN)),
    spec("fd", Syntax::Exact, &[FD], Operands::PatternThenPaths(&[])),
    spec("fdfind", Syntax::Exact, &[FD], Operands::PatternThenPaths(&[])),
    spec("tree", Syntax::Exact, &[TREE, HELP], PATHS),
    spec("find", Syntax::Find, &[FIND], PATHS),
    gnu("sort", &[SORT, HELP], PATHS),
    gnu("uniq", &[UNIQ, HELP], Operands::AtMostPaths(1)),
    gnu("cut", &[CUT, HELP], PATHS),
    gnu("tr", &[TR, HELP], TEXT),
    gnu("stat", &[STAT, HELP], PATHS),
    gnu("du", &[DU, HELP], PATHS),
    gnu("df", &[DF, HELP], PATHS),
    gnu("diff", &[DIFF, HELP], PATHS),
    gnu("cmp", &[CMP, HELP], Operands::AtMostPaths(2)),
    gnu("realpath", &[REALPATH, HELP], PATHS),
    gnu("readlink", &[READLINK, HELP], PATHS),
    gnu("basename", &[&["-a", "-s=", "-z", "--multiple", "--suffix=", "--zero"], HELP], TEXT),
    gnu("dirname", &[&["-z", "--zero"], HELP], TEXT),
    gnu("pwd", &[&["-L", "-P"], HELP], NONE),
    // Their words are text whatever they look like (`echo -delete` prints it).
    spec("echo", Syntax::Any, &[], TEXT),
    spec("true", Syntax::Any, &[], TEXT),
    spec("false", Syntax::Any, &[], TEXT),
    gnu("sleep", &[HELP], TEXT),
    gnu("which", &[&["-a", "-s"]], TEXT),
    gnu("type", &[&["-a", "-f", "-P", "-p", "-t"]], TEXT),
    spec("test", Syntax::Any, &[], TEXT),
    spec("[", Syntax::Any, &[], TEXT),
    gnu("whoami", &[HELP], NONE),
    gnu("uname", &[UNAME, HELP], NONE),
    gnu("id", &[ID, HELP], TEXT),
    gnu("groups", &[HELP], TEXT),
    gnu("nproc", &[&["--all", "--ignore="], HELP], NONE),
    gnu("arch", &[HELP], NONE),
    gnu("uptime", &[&["-p", "-s", "--pretty", "--since"], HELP], NONE),
    gnu("hostname", &[&["-f", "-s", "-i", "-I", "-d", "-A", "--fqdn", "--long", "--short", "--ip-address", "--all-ip-addresses", "--domain"], HELP], NONE),
    gnu("locale", &[&["-a", "-m", "-c", "-k", "-v", "--all-locales", "--charmaps", "--category-name", "--keyword-name", "--verbose"], HELP], TEXT),
    gnu("date", &[DATE, HELP], Operands::Format),
    gnu("seq", &[SEQ, HELP], TEXT),
    gnu("sha256sum", &[SUM, HELP], PATHS),
    gnu("sha512sum", &[SUM, HELP], PATHS),
    gnu("sha1sum", &[SUM, HELP], PATHS),
    gnu("md5sum", &[SUM, HELP], PATHS),
    gnu("b2sum", &[SUM, HELP], PATHS),
    gnu("cksum", &[SUM, HELP], PATHS),
    gnu("column", &[COLUMN, HELP], PATHS),
    gnu("tac", &[TAC, HELP], PATHS),
    gnu("rev", &[HELP], PATHS),
    gnu("comm", &[COMM, HELP], PATHS),
    gnu("paste", &[PASTE, HELP], PATHS),
    gnu("fold", &[FOLD, HELP], PATHS),
    gnu("expand", &[EXPAND, HELP], PATHS),
    gnu("unexpand", &[EXPAND, HELP], PATHS),
    gnu("join", &[JOIN, HELP], PATHS),
    gnu("strings", &[STRINGS, HELP], PATHS),
    gnu("nl", &[NL, HELP], PATHS),
    gnu("od", &[OD, HELP], PATHS),
    spec("hexdump", Syntax::Exact, &[HEXDUMP, HELP], PATHS),
    spec("jq", Syntax::Exact, &[JQ, HELP], Operands::PatternThenPaths(JQ_PROGRAM)),
    gnu("file", &[FILE, HELP], PATHS),
    gnu("nm", &[NM, HELP], PATHS),
    gnu("objdump", &[OBJDUMP, HELP], PATHS),
    gnu("readelf", &[READELF, HELP], PATHS),
    gnu("size", &[SIZE, HELP], PATHS),
    // Any flag but BSD's `e` (every process's environment: see `judge`).
    spec("ps", Syntax::Any, &[], TEXT),
    gnu("cd", &[CD], TEXT),
    gnu("rustc", &[VERSION_ONLY], NONE),
    gnu("node", &[VERSION_ONLY, &["-v"]], NONE),
    gnu("python", &[VERSION_ONLY], NONE),
    gnu("python3", &[VERSION_ONLY], NONE),
    Spec { name: "cargo", syntax: Syntax::Gnu, flags: &[VERSION_ONLY], operands: NONE, subcommands: CARGO_SUBCOMMANDS, requires: &[] },
    Spec { name: "git", syntax: Syntax::Gnu, flags: &[GIT], operands: NONE, subcommands: GIT_SUBCOMMANDS, requires: &[] },
];

/// `cargo check`, `build`, `test`, `clippy`, `doc` compile the crate and
/// run its `build.rs` and proc macros; `tree` and `metadata` may rewrite
/// `Cargo.lock`. What is left only reads.
const CARGO_SUBCOMMANDS: &[Spec] = &[gnu("version", &[&["-v", "--verbose"]], NONE), gnu("locate-project", &[&["--workspace", "--message-format=", "--manifest-path=path"]], NONE)];

/// The entry for a command name, if it has one.
pub fn lookup(name: &str) -> Option<&'static Spec> {
    COMMANDS.iter().find(|spec| spec.name == name)
}

/// Commands whose program a file in the project chooses (a rustup proxy
/// reads `rust-toolchain.toml`, which may name a toolchain in the
/// repository; pyenv, asdf and mise shims read `.python-version` and
/// `.tool-versions`; Volta and Corepack read `package.json`): with such a
/// file in the command's folder or above it, the command runs a program
/// the repository picked, so it is not read-only.
pub const TOOLCHAIN_FILES: &[(&[&str], &[&str])] = &[
    (&["cargo", "rustc", "rustup", "rustdoc", "rustfmt", "cargo-clippy", "clippy-driver"], &["rust-toolchain", "rust-toolchain.toml"]),
    (&["python", "python3", "pip", "pip3", "pydoc"], &[".python-version", ".tool-versions", "mise.toml", ".mise.toml", "pyvenv.cfg"]),
    (&["node", "npm", "npx", "pnpm", "yarn", "corepack"], &[".node-version", ".nvmrc", ".tool-versions", "mise.toml", ".mise.toml", "package.json"]),
];

/// Bash builtins in the table: the shell runs them itself, whatever the
/// PATH holds.
pub const BUILTINS: &[&str] = &["cd", "echo", "true", "false", "test", "[", "pwd", "type"];

/// One flag as the table writes it, parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flag<'a> {
    /// The spelling without values: `-n`, `--regexp`.
    pub name: &'a str,
    pub values: Values<'a>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values<'a> {
    None,
    /// Given only glued: `--color=never`, `-i{}`.
    Optional,
    /// Required values, comma-separated kinds: `text`, `path` (empty: `text`).
    Required(&'a str),
}

impl<'a> Flag<'a> {
    pub fn parse(text: &'a str) -> Flag<'a> {
        match text.split_once('=') {
            None => Flag { name: text, values: Values::None },
            Some((name, "?")) => Flag { name, values: Values::Optional },
            Some((name, kinds)) => Flag { name, values: Values::Required(kinds) },
        }
    }
}

impl Values<'_> {
    /// The kinds of the required values, in order.
    pub fn kinds(&self) -> Vec<ValueKind> {
        match self {
            Values::Required(kinds) => kinds.split(',').map(|k| if k.trim() == "path" { ValueKind::Path } else { ValueKind::Text }).collect(),
            _ => Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueKind {
    Text,
    Path,
}

impl Spec {
    pub fn flags(&self) -> impl Iterator<Item = Flag<'static>> + '_ {
        self.flags.iter().flat_map(|group| group.iter()).map(|f| Flag::parse(f))
    }

    pub fn subcommand(&self, name: &str) -> Option<&'static Spec> {
        self.subcommands.iter().find(|s| s.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_specs() -> Vec<(String, &'static Spec)> {
        let mut out = Vec::new();
        fn walk(prefix: &str, specs: &'static [Spec], out: &mut Vec<(String, &'static Spec)>) {
            for spec in specs {
                let name = if prefix.is_empty() { spec.name.to_string() } else { format!("{prefix} {}", spec.name) };
                walk(&name, spec.subcommands, out);
                out.push((name, spec));
            }
        }
        walk("", COMMANDS, &mut out);
        out
    }

    #[test]
    fn every_entry_is_well_formed() {
        let mut names = std::collections::BTreeSet::new();
        for (name, spec) in all_specs() {
            assert!(names.insert(name.clone()), "{name} is listed twice");
            let mut seen = std::collections::BTreeSet::new();
            for flag in spec.flags() {
                assert!(seen.insert(flag.name), "{name}: {} is listed twice", flag.name);
                let ok = match spec.syntax {
                    Syntax::Find => flag.name.starts_with('-') || matches!(flag.name, "!" | "(" | ")" | ","),
                    _ => flag.name == "-NUM" || (flag.name.starts_with("--") && flag.name.len() > 3) || (flag.name.len() == 2 && flag.name.starts_with('-')),
                };
                assert!(ok, "{name}: {:?} is not a flag spelling", flag.name);
                if let Values::Required(kinds) = flag.values {
                    assert!(kinds.split(',').all(|k| matches!(k, "" | "text" | "path")), "{name}: {kinds}");
                }
            }
            assert!(spec.requires.iter().all(|r| spec.flags().any(|f| f.name == *r)), "{name}: requires an unlisted flag");
        }
    }

    /// Every entry of the table, with a command it lets run unasked and
    /// one it does not (a flag that writes or runs code where the command
    /// has one, else a path outside the workspace, an operand that would
    /// be written, or a flag the entry does not list). `None`: the entry
    /// takes any word (`echo`). An entry without a row fails the test.
    const EXAMPLES: &[(&str, &str, Option<&str>)] = &[
        ("ls", "ls -la --color=never src", Some("ls -la /etc")),
        ("dir", "dir -R src", Some("dir ../")),
        ("cat", "cat -n notes.txt", Some("cat /etc/passwd")),
        ("head", "head -5 notes.txt", Some("head -n1 ../x")),
        ("tail", "tail -n 3 notes.txt", Some("tail -f notes.txt")),
        ("wc", "wc -l notes.txt", Some("wc --files0-from=list")),
        ("grep", "grep -rn -e fn src", Some("grep -r x /")),
        ("egrep", "egrep -c x notes.txt", Some("egrep x /etc/passwd")),
        ("fgrep", "fgrep -l x src", Some("fgrep -f /etc/shadow x")),
        ("rg", "rg -n --hidden -g *.rs fn src", Some("rg --pre=sh x")),
        ("fd", "fd -e rs . src", Some("fd -x rm")),
        ("fdfind", "fdfind -t f x", Some("fdfind -X rm")),
        ("tree", "tree -L 2 src", Some("tree -o notes.txt")),
        ("find", "find src -name *.rs -type f -print", Some("find . -name x -delete")),
        ("sort", "sort -u -k2 notes.txt", Some("sort -o notes.txt notes.txt")),
        ("uniq", "uniq -c notes.txt", Some("uniq notes.txt out.txt")),
        ("cut", "cut -d: -f1 notes.txt", Some("cut -f1 /etc/passwd")),
        ("tr", "tr a-z A-Z", Some("tr --bogus a b")),
        ("stat", "stat -c %s notes.txt", Some("stat /etc/shadow")),
        ("du", "du -sh src", Some("du -sh /")),
        ("df", "df -h .", Some("df /")),
        ("diff", "diff -u notes.txt src/../notes.txt", Some("diff notes.txt /etc/passwd")),
        ("cmp", "cmp notes.txt notes.txt", Some("cmp notes.txt notes.txt out.txt")),
        ("realpath", "realpath src", Some("realpath /etc")),
        ("readlink", "readlink -f src", Some("readlink -f /etc/x")),
        ("basename", "basename -s .rs src/main.rs", Some("basename --bogus x")),
        ("dirname", "dirname src/main.rs", Some("dirname --bogus x")),
        ("pwd", "pwd -P", Some("pwd x")),
        ("echo", "echo -n -delete {} ;", None),
        ("true", "true -o x", None),
        ("false", "false --output x", None),
        ("sleep", "sleep 1", Some("sleep --bogus 1")),
        ("which", "which -a rm", Some("which --bogus rm")),
        ("type", "type -t rm", Some("type --bogus rm")),
        ("test", "test -f notes.txt", None),
        ("[", "[ -d src ]", None),
        ("whoami", "whoami", Some("whoami x")),
        ("uname", "uname -a", Some("uname x")),
        ("id", "id -u", Some("id --bogus")),
        ("groups", "groups", Some("groups --bogus")),
        ("nproc", "nproc --all", Some("nproc x")),
        ("arch", "arch", Some("arch x")),
        ("uptime", "uptime -p", Some("uptime x")),
        ("hostname", "hostname -f", Some("hostname newname")),
        ("locale", "locale -a", Some("locale --bogus")),
        ("date", "date -u +%F", Some("date -s 2020-01-01")),
        ("seq", "seq -w 1 10", Some("seq --bogus 1")),
        ("sha256sum", "sha256sum notes.txt", Some("sha256sum -c sums.txt")),
        ("sha512sum", "sha512sum notes.txt", Some("sha512sum /etc/shadow")),
        ("sha1sum", "sha1sum notes.txt", Some("sha1sum --check sums.txt")),
        ("md5sum", "md5sum notes.txt", Some("md5sum /etc/shadow")),
        ("b2sum", "b2sum notes.txt", Some("b2sum -c sums.txt")),
        ("cksum", "cksum notes.txt", Some("cksum /etc/shadow")),
        ("column", "column -t notes.txt", Some("column /etc/passwd")),
        ("tac", "tac notes.txt", Some("tac /etc/passwd")),
        ("rev", "rev notes.txt", Some("rev /etc/passwd")),
        ("comm", "comm -12 notes.txt notes.txt", Some("comm notes.txt /etc/passwd")),
        ("paste", "paste -s notes.txt", Some("paste /etc/passwd")),
        ("fold", "fold -w 40 notes.txt", Some("fold /etc/passwd")),
        ("expand", "expand -t 4 notes.txt", Some("expand /etc/passwd")),
        ("unexpand", "unexpand -a notes.txt", Some("unexpand /etc/passwd")),
        ("join", "join notes.txt notes.txt", Some("join notes.txt /etc/passwd")),
        ("strings", "strings -n 8 notes.txt", Some("strings /etc/shadow")),
        ("nl", "nl -ba notes.txt", Some("nl /etc/passwd")),
        ("od", "od -c notes.txt", Some("od /etc/shadow")),
        ("hexdump", "hexdump -C notes.txt", Some("hexdump /etc/shadow")),
        ("jq", "jq -r .a notes.txt", Some("jq --args . x")),
        ("file", "file -b notes.txt", Some("file -C -m magic")),
        ("nm", "nm -C notes.txt", Some("nm /bin/ls")),
        ("objdump", "objdump -d notes.txt", Some("objdump -d /bin/ls")),
        ("readelf", "readelf -h notes.txt", Some("readelf -a /bin/ls")),
        ("size", "size -A notes.txt", Some("size /bin/ls")),
        ("ps", "ps aux", Some("ps auxe")),
        ("cd", "cd -P src", Some("cd --bogus src")),
        ("rustc", "rustc --version", Some("rustc main.rs")),
        ("node", "node -v", Some("node script.js")),
        ("python", "python --version", Some("python x.py")),
        ("python3", "python3 -V", Some("python3 -c 1")),
        ("cargo", "cargo --version", Some("cargo check")),
        ("cargo version", "cargo version -v", Some("cargo version --bogus")),
        ("cargo locate-project", "cargo locate-project --workspace", Some("cargo locate-project --manifest-path /etc/Cargo.toml")),
        ("git", "git --no-pager -P status", Some("git -c core.pager=sh log")),
        ("git status", "git status -sb src", Some("git status /etc")),
        ("git diff", "git diff --stat HEAD~1 -- src", Some("git diff --ext-diff")),
        ("git log", "git log --oneline -5", Some("git log --output=x")),
        ("git show", "git show --stat HEAD", Some("git show --textconv HEAD")),
        ("git whatchanged", "git whatchanged -3", Some("git whatchanged --output=x")),
        ("git rev-list", "git rev-list --count HEAD", Some("git rev-list --bogus")),
        ("git shortlog", "git shortlog -sn", Some("git shortlog --output=x")),
        ("git blame", "git blame -L 1,5 notes.txt", Some("git blame --contents /etc/passwd notes.txt")),
        ("git rev-parse", "git rev-parse --show-toplevel", Some("git rev-parse --bogus")),
        ("git ls-files", "git ls-files -o src", Some("git ls-files /etc")),
        ("git ls-tree", "git ls-tree -r HEAD", Some("git ls-tree --bogus")),
        ("git describe", "git describe --tags", Some("git describe --bogus")),
        ("git cat-file", "git cat-file -p HEAD", Some("git cat-file --textconv HEAD:x")),
        ("git grep", "git grep -n -e fn", Some("git grep -O x")),
        ("git merge-base", "git merge-base main HEAD", Some("git merge-base --bogus")),
        ("git show-ref", "git show-ref --heads", Some("git show-ref --bogus")),
        ("git count-objects", "git count-objects -vH", Some("git count-objects x")),
        ("git branch", "git branch -a", Some("git branch -D main")),
        ("git tag", "git tag -l", Some("git tag v1")),
        ("git remote", "git remote -v", Some("git remote add x y")),
        ("git reflog", "git reflog show -5", Some("git reflog expire --all")),
        ("git reflog show", "git reflog show HEAD", Some("git reflog show --output=x")),
        ("git stash", "git stash list", Some("git stash drop")),
        ("git stash list", "git stash list --oneline", Some("git stash list x")),
        ("git stash show", "git stash show -p", Some("git stash show --ext-diff")),
        ("git config", "git config --get user.name", Some("git config user.name x")),
        ("git help", "git help -a", Some("git help -w log")),
        ("git version", "git version", Some("git version x")),
    ];

    fn judge(line: &str, root: &std::path::Path) -> Option<String> {
        let roots = [root.to_path_buf()];
        let ctx = super::super::judge::Context { cwd: Some(root), roots: &roots };
        let words: Vec<String> = line.split(' ').map(String::from).collect();
        super::super::judge::read_only_problem(&words, ctx)
    }

    // Unix only: its expectations are Linux's: `/` paths, names compared with case (Windows' spellings: platform:: tests and tests/windows/smoke).
    #[cfg(unix)]
    #[test]
    fn every_entry_runs_what_it_lists_and_asks_what_it_does_not() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
        std::fs::create_dir(root.join("src")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(root.join("notes.txt"), "x").unwrap_or_else(|e| panic!("{e}"));
        let entries: Vec<String> = all_specs().into_iter().map(|(name, _)| name).collect();
        for entry in &entries {
            assert!(EXAMPLES.iter().any(|(name, _, _)| name == entry), "`{entry}` has no row in EXAMPLES");
        }
        for (name, runs, asked) in EXAMPLES {
            assert!(entries.iter().any(|e| e == name), "EXAMPLES names `{name}`, which the table has not");
            for line in std::iter::once(runs).chain(asked) {
                assert!(line == name || line.starts_with(&format!("{name} ")), "`{line}` does not run `{name}`");
            }
            assert_eq!(judge(runs, &root), None, "`{runs}` should run unasked");
            match asked {
                Some(asked) => assert!(judge(asked, &root).is_some(), "`{asked}` should be asked"),
                None => assert_eq!(lookup(name).map(|s| s.syntax), Some(Syntax::Any), "`{name}` takes flags: give it an asked example"),
            }
        }
    }

    /// The flags the issue found writing or running code are absent.
    #[test]
    fn flags_that_write_or_run_code_are_absent() {
        let absent = [
            ("sort", &["-o", "--output", "--compress-program", "-T", "--temporary-directory", "--files0-from"][..]),
            ("tree", &["-o", "-R"]),
            ("fd", &["-x", "--exec", "-X", "--exec-batch", "-l", "--list-details"]),
            ("rg", &["--pre", "--pre-glob", "-z", "--search-zip", "--hostname-bin"]),
            ("find", &["-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"]),
            ("date", &["-s", "--set"]),
            ("file", &["-C", "-z", "-Z"]),
            ("wc", &["--files0-from"]),
            ("git", &["-c", "-C", "--exec-path", "--git-dir", "--work-tree", "--config-env"]),
        ];
        for (command, flags) in absent {
            let spec = lookup(command).unwrap_or_else(|| panic!("{command} has no entry"));
            for flag in flags {
                assert!(spec.flags().all(|f| f.name != *flag), "{command} {flag} must not be harmless");
            }
        }
        let git = lookup("git").and_then(|g| g.subcommand("grep"));
        assert!(git.is_some_and(|g| g.flags().all(|f| f.name != "-O" && f.name != "--open-files-in-pager")));
        for sub in ["log", "diff", "show"] {
            let spec = lookup("git").and_then(|g| g.subcommand(sub));
            assert!(spec.is_some_and(|s| s.flags().all(|f| !matches!(f.name, "--output" | "--ext-diff" | "--textconv" | "--no-index"))));
        }
        for command in ["xargs", "env", "make", "less", "ldd", "printf", "tee", "xxd"] {
            assert!(lookup(command).is_none(), "{command} must not have an entry");
        }
        let cargo = lookup("cargo");
        for sub in ["check", "build", "test", "clippy", "doc", "tree", "metadata", "run"] {
            assert!(cargo.is_some_and(|c| c.subcommand(sub).is_none()), "cargo {sub} must not be read-only");
        }
    }
}
