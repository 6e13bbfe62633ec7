"""Script splitting: ';' inside strings/comments/identifiers, statement sets, positions."""

from planner.parse_split import is_complete, split_script


def test_semicolons_in_strings_comments_identifiers() -> None:
    s = "SET 'a' = 'x;y''z;'; /* c; */ SELECT `a;b` FROM t -- tail;\n; SELECT 2"
    assert split_script(s) == [
        ("SET 'a' = 'x;y''z;'", 1, 1),
        ("SELECT `a;b` FROM t", 1, 31),
        ("SELECT 2", 2, 3),
    ]


def test_empty_and_comment_only_chunks_skipped() -> None:
    assert split_script("select 1 /* a */ ; -- c\n /* only */;  ;\n") == [("select 1", 1, 1)]
    assert split_script("-- nothing\n/* x */") == []


def test_missing_final_semicolon_and_leading_comments() -> None:
    assert split_script("-- hi\n\n  SELECT 1") == [("SELECT 1", 3, 3)]


def test_statement_sets_are_one_statement() -> None:
    s = (
        "EXECUTE STATEMENT SET BEGIN\nINSERT INTO a SELECT CASE WHEN x THEN 1 END FROM t;\n"
        "INSERT INTO b SELECT 1;\nEND;\nBEGIN STATEMENT SET;\nINSERT INTO a SELECT 1;\nEND;\nSELECT 3;"
    )
    parts = split_script(s)
    assert [p[1] for p in parts] == [1, 5, 8]
    assert parts[0][0].endswith("END") and parts[0][0].count("INSERT") == 2
    assert parts[1][0].startswith("BEGIN STATEMENT SET;")
    assert parts[2][0] == "SELECT 3"


def test_is_complete() -> None:
    assert is_complete("select 1;")
    assert not is_complete("select 1")
    assert not is_complete("select ';")
    assert not is_complete("select 1; /* open")
    assert not is_complete("BEGIN STATEMENT SET; INSERT INTO a SELECT 1;")
    assert is_complete("BEGIN STATEMENT SET; INSERT INTO a SELECT 1; END;")
    assert not is_complete("")
