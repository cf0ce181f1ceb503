//! The shell-words reader against the shell's own reading: quotes, ANSI-C and locale
//! quotes, braces, redirections, here-documents and substitutions.

use super::*;

fn words(line: &str) -> Vec<Vec<String>> {
    parse(line)
        .simples()
        .map(|s| s.words.iter().map(|w| w.text.clone()).collect())
        .collect()
}

#[test]
fn quotes_and_escapes_are_removed_from_words() {
    assert_eq!(
        words(r#"echo 'a b' "c \"d\"" e\ f r''m"#),
        vec![vec!["echo", "a b", "c \"d\"", "e f", "rm"]]
    );
}

#[test]
fn ansi_c_and_locale_quotes_are_decoded_as_bash_decodes_them() {
    assert_eq!(words(r"$'\x72m' -rf x"), vec![vec!["rm", "-rf", "x"]]);
    assert_eq!(words(r"$'\162\155' -rf x"), vec![vec!["rm", "-rf", "x"]]);
    assert_eq!(words(r"$'\u0072m' x"), vec![vec!["rm", "x"]]);
    assert_eq!(words(r#"$"rm" x"#), vec![vec!["rm", "x"]]);
    assert_eq!(words(r"echo $'a\'b'"), vec![vec!["echo", "a'b"]]);
    let line = parse(r"$'\x72m' x");
    assert!(!line.pipelines[0].stages[0].words[0].plain);
}

#[test]
fn unquoted_braces_expand_into_words_and_quoted_ones_do_not() {
    assert_eq!(words("{rm,-rf,~}"), vec![vec!["rm", "-rf", "~"]]);
    assert_eq!(words("echo '{a,b}'"), vec![vec!["echo", "{a,b}"]]);
    assert_eq!(words("s{u,}do id"), vec![vec!["sudo", "sdo", "id"]]);
    assert!(!parse("{rm,x}").pipelines[0].stages[0].words[0].plain);
}

#[test]
fn lists_and_pipelines_split_into_simple_commands() {
    let line = parse("a 1 && b | c; d || e & f\ng");
    let shape: Vec<usize> = line.pipelines.iter().map(|p| p.stages.len()).collect();
    assert_eq!(shape, vec![1, 2, 1, 1, 1, 1]);
}

#[test]
fn redirections_take_the_next_word_as_target() {
    let line = parse("cat a 2> err >> out <in");
    let s = &line.pipelines[0].stages[0];
    assert_eq!(s.texts(), vec!["cat", "a"]);
    let ops: Vec<(&str, &str)> = s
        .redirects
        .iter()
        .map(|r| (r.op.as_str(), r.target.as_str()))
        .collect();
    assert_eq!(ops, vec![(">", "err"), (">>", "out"), ("<", "in")]);
}

#[test]
fn a_here_document_body_is_read_apart_from_the_commands() {
    let line = parse("bash <<EOF\nrm -rf x\nEOF\necho done");
    assert_eq!(words("bash <<EOF\nrm -rf x\nEOF\necho done").len(), 2);
    let stage = &line.pipelines[0].stages[0];
    assert_eq!(line.heredoc_body(&stage.redirects[0]), Some("rm -rf x\n"));
    let tabs = parse("sh <<-'END'\n\tid\n\tEND\n");
    let stage = &tabs.pipelines[0].stages[0];
    assert_eq!(tabs.heredoc_body(&stage.redirects[0]), Some("id\n"));
}

#[test]
fn substitutions_in_an_unquoted_here_document_are_recorded() {
    let line = parse("cat <<EOF\n$(rm -rf x)\nEOF");
    assert_eq!(line.pipelines[0].stages[0].substitutions, vec!["rm -rf x"]);
    let quoted = parse("cat <<'EOF'\n$(rm -rf x)\nEOF");
    assert!(quoted.pipelines[0].stages[0].substitutions.is_empty());
}

#[test]
fn a_here_string_is_a_redirection_that_feeds_text() {
    let line = parse("bash <<< 'rm -rf x'");
    let r = &line.pipelines[0].stages[0].redirects[0];
    assert_eq!((r.op.as_str(), r.target.as_str()), ("<<<", "rm -rf x"));
    assert!(r.feeds_text());
}

#[test]
fn substitution_bodies_are_recorded_even_inside_double_quotes() {
    let line = parse(r#"echo "$(rm -rf /)" `id` <(curl x)"#);
    let s = &line.pipelines[0].stages[0];
    assert_eq!(s.substitutions, vec!["rm -rf /", "id", "curl x"]);
    assert!(!line.unbalanced);
    assert!(s.words.iter().skip(1).all(|w| w.expands && !w.plain));
}

#[test]
fn a_dollar_in_single_quotes_is_no_expansion() {
    let line = parse("echo '$HOME' \"$HOME\" $HOME plain");
    let w = &line.pipelines[0].stages[0].words;
    assert!(!w[1].expands && w[1].plain);
    assert!(w[2].expands && w[3].expands && w[4].plain);
}

#[test]
fn a_comment_is_not_a_command() {
    assert_eq!(words("ls # rm -rf /"), vec![vec!["ls"]]);
    assert_eq!(words("echo a#b"), vec![vec!["echo", "a#b"]]);
}

#[test]
fn an_open_quote_is_marked_unbalanced() {
    assert!(parse("echo 'abc").unbalanced);
    assert!(parse("echo \"abc").unbalanced);
    assert!(parse("echo $(ls").unbalanced);
    assert!(parse("echo `ls").unbalanced);
    assert!(parse("echo $'abc").unbalanced);
    assert!(!parse("echo 'abc'").unbalanced);
}

#[test]
fn unquoted_glob_characters_are_marked_and_quoted_ones_are_not() {
    let line = parse("ls *.txt '*.md'");
    let s = &line.pipelines[0].stages[0];
    assert!(s.words[1].glob);
    assert!(!s.words[2].glob);
}

#[test]
fn assignments_are_recognised_by_name_shape() {
    assert!(is_assignment("FOO=1"));
    assert!(is_assignment("_x9="));
    assert!(is_assignment("PATH+=x"));
    assert!(!is_assignment("--output=x"));
    assert!(!is_assignment("9A=1"));
}
