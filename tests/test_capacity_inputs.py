"""`python -m capacity` on the inputs a new user tries: every unusable one is refused with exit 2, the input, the
value and the fix, and never with a traceback (docs/capacity-what-if.md, "Exit codes")."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from capacity.cli import main
from capacity.trace import Segment, segments

ROOT = Path(__file__).resolve().parents[1]
#: dev, driven by a trace of the test's own with 1 request per GPU-minute.
RUN = ["dev", "--column", "requests", "--per-gpu", "1"]


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = main(list(args))
    return status, capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        pytest.param(b"minute,requests\n0,10\n1,nan\n2,5\n", [":3:", "requests='nan'", "not a finite number"],
                     id="nan"),
        pytest.param(b"minute,requests\n0,10\n1,inf\n", [":3:", "requests='inf'", "not a finite number"], id="inf"),
        pytest.param(b"minute,requests\n0,1e400\n", [":2:", "'1e400'", "not a finite number"], id="overflow"),
        pytest.param(b"minute,requests\n0,10\n1,\n2,5\n", [":3:", "requests=''", "a blank is not read as 0",
                                                            "write 0 for no demand"], id="blank-cell"),
        pytest.param(b"minute,requests\n0,10\n1,caf\xe9\n", [":3:", "not UTF-8", "0xe9", "iconv"], id="latin-1"),
        pytest.param(b"minute,requests\n0,abc\n", [":2:", "requests='abc'", "not a finite number"], id="text"),
        pytest.param(b"minute,requests\n0,-4\n", [":2:", "negative demand"], id="negative"),
        pytest.param(b"", ["is empty", "a header"], id="empty-file"),
        pytest.param(b"minute,requests\n", ["a header but no rows"], id="header-only"),
        pytest.param(b"when,requests\n0,1\n", [":1:", "no time column", "'minute'", "'time'"], id="no-time-column"),
        pytest.param(b"minute,tokens\n0,1\n", [":1:", "no column 'requests'", "['tokens']"], id="unknown-column"),
        pytest.param(b"minute,requests,requests\n0,1,2\n", [":1:", "'requests' more than once"], id="duplicate-column"),
        pytest.param(b"minute,requests\n0,1\n2,3\n1,4\n", [":4:", "minute='1': the time does not increase",
                                                           "sort the trace by time"], id="unsorted"),
        pytest.param(b"minute,requests\n0,1\n0,3\n", [":3:", "minute='0'", "merge rows with the same time"],
                     id="duplicate-time"),
        pytest.param(b"minute,requests\n0,1\n,3\n", [":3:", "minute=''", "is empty"], id="blank-time"),
        pytest.param(b"minute,requests\nnan,1\n", [":2:", "minute='nan'", "not a finite number"], id="nan-time"),
        pytest.param(b"minute,requests\n0,1,2\n", [":2:", "more cells than the header"], id="extra-cell"),
        pytest.param(b"minute,requests\n0\n", [":2:", "fewer cells than the header"], id="missing-cell"),
        pytest.param(b"time,requests\n2026-01-05T00:00:00,1\n2026-01-05T00:01:00,2\n", [":2:", "no UTC offset"],
                     id="timestamp-without-offset"),
        pytest.param(b"time,requests\n2026-01-05T00:00:00Z,1\n60,2\n", [":3:", "time='60'", "not an ISO 8601"],
                     id="timestamps-then-seconds"),
        pytest.param(b"time,requests\n0,1\n2026-01-05T00:00:00Z,2\n", [":3:", "is not a number"],
                     id="seconds-then-timestamp"),
    ],
)
def test_a_trace_that_cannot_be_demand_is_refused_with_line_value_and_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, expected: list[str]
) -> None:
    trace = tmp_path / "trace.csv"
    trace.write_bytes(content)
    status, err = run(capsys, *RUN, "--trace", str(trace))
    assert status == 2, err
    assert str(trace) in err and "Fix:" in err, err
    for fragment in expected:
        assert fragment in err, err


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        pytest.param(["--days", "-1"], ["--days: -1.0 is not a positive number of days"], id="days-negative"),
        pytest.param(["--days", "0"], ["--days: 0.0 is not a positive number of days", "leave it out"],
                     id="days-zero"),
        pytest.param(["--days", "nan"], ["--days: nan"], id="days-nan"),
        pytest.param(["--days", "inf"], ["--days: inf"], id="days-inf"),
        pytest.param(["--per-gpu", "nan"], ["--per-gpu: nan is not a positive number"], id="per-gpu-nan"),
        pytest.param(["--per-gpu", "inf"], ["--per-gpu: inf"], id="per-gpu-inf"),
        pytest.param(["--per-gpu", "-3"], ["--per-gpu: -3.0"], id="per-gpu-negative"),
        pytest.param(["--set", "whatIf.perGpu=.inf"],
                     ["whatIf.perGpu (from --set whatIf.perGpu=.inf): inf is not a finite number"],
                     id="whatif-per-gpu-inf"),
        pytest.param(["--json", "{tmp}/no/such/folder/out.json"], ["--json", "folder that does not exist",
                                                                  "mkdir -p"], id="json-missing-folder"),
        pytest.param(["--json", "{tmp}"], ["--json", "is a directory"], id="json-directory"),
        pytest.param(["--plot", "{tmp}/no/such/folder/out.png"], ["--plot", "folder that does not exist"],
                     id="plot-missing-folder"),
        pytest.param(["--plot", "{tmp}/out.txt"], ["--plot", ".txt, which matplotlib cannot write", ".png"],
                     id="plot-unknown-format"),
        pytest.param(["--trace", "{tmp}"], ["is a directory, not a trace"], id="trace-directory"),
        pytest.param(["--trace", "no-such-trace.csv"], ["no trace file 'no-such-trace.csv'", "current directory",
                                                        "repository root"], id="trace-missing"),
        pytest.param(["--set", "whatIf=null"], ["--trace: (not set) is not given, and the stack has no whatIf.trace"],
                     id="no-trace"),
        pytest.param(["--days", "-1", "--per-gpu", "0", "--json", "{tmp}/x/y.json"],
                     ["3 problems", "--days", "--per-gpu", "--json"], id="all-problems-at-once"),
    ],
)
def test_a_bad_command_line_is_refused_before_the_replay_with_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], expected: list[str]
) -> None:
    status, err = run(capsys, "dev", *(a.replace("{tmp}", str(tmp_path)) for a in args))
    assert status == 2, err
    assert "Fix:" in err and "simulated" not in err, err  # refused before any replay
    for fragment in expected:
        assert fragment in err, err
    assert not (tmp_path / "out.txt").exists()


def test_an_unknown_stack_names_the_stacks_there(capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run(capsys, "staging")
    assert status == 2
    assert "Pulumi.staging.yaml" in err and "dev, prod" in err and "Fix:" in err


def test_days_beyond_the_trace_replays_it_all_and_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "t.csv"
    trace.write_text("minute,requests\n0,1\n60,2\n")
    status, err = run(capsys, *RUN, "--trace", str(trace), "--days", "3")
    assert status == 0, err
    assert "asked for more than the trace holds: replayed all of it (0.08 days)" in err


def test_a_spreadsheets_byte_order_mark_is_not_part_of_the_header(tmp_path: Path) -> None:
    plain, marked = tmp_path / "plain.csv", tmp_path / "bom.csv"
    plain.write_text("minute,requests\n0,1\n1,2\n")
    marked.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    assert list(segments(marked)) == list(segments(plain)) == [Segment(0, 60, 1.0), Segment(60, 120, 2.0)]


@pytest.mark.subprocess
def test_the_installed_command_prints_no_traceback(tmp_path: Path) -> None:
    trace = tmp_path / "t.csv"
    trace.write_bytes(b"minute,requests\n0,1\n1,\xff\n")
    result = subprocess.run([sys.executable, "-m", "capacity", *RUN, "--trace", str(trace), "--days", "-1",
                             "--json", str(tmp_path / "missing" / "r.json")], cwd=ROOT, capture_output=True,
                            text=True, check=False)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "--days" in result.stderr and "--json" in result.stderr
    result = subprocess.run([sys.executable, "-m", "capacity", *RUN, "--trace", str(trace)], cwd=ROOT,
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2 and "Traceback" not in result.stderr and "not UTF-8" in result.stderr


def test_the_comparison_into_a_missing_folder_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from capacity.compare import main as compare_main

    assert compare_main([str(tmp_path / "no" / "c.md"), str(tmp_path), "prod"]) == 2
    assert "cannot be written" in capsys.readouterr().err
