# SPDX-License-Identifier: Apache-2.0
"""Tests of the DataLoader observer (tracer/observer): real jobs (tests/observer/jobs) started the
way `ingero-bench trace` starts them -- the observer's directory first on PYTHONPATH, before the
user's own entries, and INGERO_OBSERVER_DIR set -- and their observer files read back; plus
in-process tests of the override rules, which need no torch.

Run from the repository root:  /usr/bin/python3 -m unittest discover -s tests/observer -p "*_test.py" -v
The jobs run with the interpreter running the tests. Tests that start a DataLoader job skip, and
say why, when that interpreter cannot import torch (Debian: apt-get install python3-torch).
"""
import glob
import importlib.util
import inspect
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OBSERVER_DIR = os.path.join(ROOT, "tracer", "observer")
JOBS = os.path.join(HERE, "jobs")
PYTHON = sys.executable
JOB_TIMEOUT_S = 120


def _plain_env():
    """The test's environment without anything that would steer the job's Python or observer."""
    drop = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONSAFEPATH")
    return {k: v for k, v in os.environ.items() if not k.startswith("INGERO_") and k not in drop}


def _torch_version():
    try:
        out = subprocess.run([PYTHON, "-c", "import torch; print(torch.__version__)"], env=_plain_env(),
                             capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


TORCH = _torch_version()
needs_torch = unittest.skipUnless(
    TORCH, "%s cannot import torch (on Debian: apt-get install python3-torch); "
           "the DataLoader jobs need it" % PYTHON)


def _load_observer_module():
    spec = importlib.util.spec_from_file_location("ingero_observer_under_test",
                                                  os.path.join(OBSERVER_DIR, "ingero_observer.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------------------------------
# Running jobs and reading their files.

class Run:
    """A finished job: exit status, output, the monotonic time around it, its observer files."""

    def __init__(self, proc, before, out_dir):
        self.stdout, self.stderr = proc.communicate(timeout=JOB_TIMEOUT_S)
        self.after = time.monotonic_ns()
        self.rc = proc.returncode
        self.before = before
        self.out_dir = out_dir
        self.pid = proc.pid

    def files(self, allow_partial_last=False):
        """{pid: [records]}: every line of every file must parse (but a killed job's last)."""
        found = {}
        if not self.out_dir:
            return found
        for path in sorted(glob.glob(os.path.join(self.out_dir, "observer-*.jsonl"))):
            with open(path) as f:
                lines = f.read().split("\n")
            if lines and lines[-1] == "":
                lines.pop()
            else:
                assert allow_partial_last, "%s does not end with a newline" % path
            records = []
            for i, line in enumerate(lines):
                try:
                    records.append(json.loads(line))
                except ValueError:
                    if not (allow_partial_last and i == len(lines) - 1):
                        raise AssertionError("%s line %d is not JSON: %r" % (path, i + 1, line[:200]))
            assert records and records[0]["type"] == "process", path
            pid = records[0]["pid"]
            assert all(r["pid"] == pid for r in records), path
            found[pid] = records
        return found


def job_env(out_dir=None, observer=True, user_paths=(), extra=None):
    env = _plain_env()
    paths = ([OBSERVER_DIR] if observer else []) + list(user_paths)
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    if out_dir is not None:
        env["INGERO_OBSERVER_DIR"] = out_dir
    # Nothing is written next to the sources (no __pycache__ in the tree), while the installed torch's
    # own .pyc files are still read: a PYTHONPYCACHEPREFIX had every job compile torch again (4.0 CPU-s
    # a job instead of 2.2).
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.update(extra or {})
    return env


def start(args, make_out_dir=True, **env_args):
    out_dir = env_args.get("out_dir")
    if make_out_dir and out_dir is not None and not os.path.exists(out_dir):
        os.mkdir(out_dir, 0o700)  # as the harness makes it: the observer never creates its folder
        os.chmod(out_dir, 0o700)
    before = time.monotonic_ns()
    proc = subprocess.Popen([PYTHON] + list(args), env=job_env(**env_args), cwd=HERE, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return proc, before, env_args.get("out_dir")


def run_all(*started):
    """Waits for jobs started together (they overlap: the suite stays short on two cores)."""
    return [Run(proc, before, out_dir) for proc, before, out_dir in started]


def loader_job(tmp, name, loaders, observe=True, overrides=None, user_paths=(), extra=None, **cfg):
    """Starts tests/observer/jobs/loader_job.py; its facts and observer files go under tmp/name."""
    base = os.path.join(tmp, name)
    os.makedirs(base)
    cfg = dict(cfg, facts=os.path.join(base, "facts.json"), loaders=loaders)
    env_extra = dict(extra or {})
    if overrides is not None:
        env_extra["INGERO_OBSERVER_OVERRIDES"] = overrides
    out_dir = os.path.join(base, "observer") if observe else None
    return start([os.path.join(JOBS, "loader_job.py"), json.dumps(cfg)], out_dir=out_dir,
                 user_paths=user_paths, extra=env_extra)


def facts_of(run):
    base = os.path.dirname(run.out_dir) if run.out_dir else None
    with open(os.path.join(base, "facts.json")) as f:
        facts = json.load(f)
    facts["workers"] = []
    path = os.path.join(base, "facts.json.workers")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                worker_id, pid, init_end = (int(x) for x in line.split())
                facts["workers"].append({"id": worker_id, "pid": pid, "init_end_ns": init_end})
    return facts


def of_type(records, kind, **match):
    return [r for r in records if r["type"] == kind and all(r.get(k) == v for k, v in match.items())]


def rows_of(records, loader, epoch):
    rows = []
    for r in of_type(records, "batches", loader=loader, epoch=epoch):
        rows.extend(r["rows"])
    return rows


OBSERVER_FRAME = '  File "<ingero-bench DataLoader observer>", line '


def without_observer_frames(traceback_text):
    """A traceback without the observer's frames (the File line and its source lines)."""
    kept, skipping = [], False
    for line in traceback_text.splitlines(keepends=True):
        if line.startswith("  File "):
            skipping = line.startswith(OBSERVER_FRAME)
        elif not line.startswith("    "):
            skipping = False
        if not skipping:
            kept.append(line)
    return "".join(kept)


def write_user_site(directory, body):
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, "sitecustomize.py"), "w") as f:
        f.write("import os\n"
                "with open(os.environ['INGERO_TEST_MARKER'], 'a') as _f:\n"
                "    _f.write('%d\\n' % os.getpid())\n" + body)
    return directory


def marker_pids(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [int(line) for line in f if line.strip()]


class TempDirTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="ingero-observer-test-")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Where the observer writes.

@needs_torch
class PrivateFolderTest(TempDirTest):
    """The observer writes only into the folder the harness made: it exists, is this user's, has mode
    0700 and is not a link. It never creates it: a traced process that outlived its trace once made the
    deleted private folder again (mode 0755, argv inside), where another user could have put a link."""

    def test_only_an_existing_private_folder_of_this_user(self):
        def job(name, prepare):
            base = os.path.join(self.tmp, name)
            os.makedirs(base)
            out_dir = os.path.join(base, "observer")
            prepare(base, out_dir)
            cfg = {"facts": os.path.join(base, "facts.json"), "loaders": [L0], "samples": SAMPLES}
            return start([os.path.join(JOBS, "loader_job.py"), json.dumps(cfg)], make_out_dir=False,
                         out_dir=out_dir)

        def folder(mode, owner=None):
            def prepare(base, out_dir):
                os.mkdir(out_dir)
                os.chmod(out_dir, mode)
                if owner is not None:
                    os.chown(out_dir, owner, owner)
            return prepare

        def link(base, out_dir):
            os.mkdir(os.path.join(base, "real"), 0o700)
            os.symlink(os.path.join(base, "real"), out_dir)

        cases = {"ours": folder(0o700), "missing": lambda base, out_dir: None, "open": folder(0o755),
                 "link": link}
        if os.geteuid() == 0:
            cases["theirs"] = folder(0o700, owner=65534)
        runs = dict(zip(cases, run_all(*(job(name, prepare) for name, prepare in cases.items()))))
        for name, run in runs.items():
            self.assertEqual(run.rc, 0, "%s: %s" % (name, run.stderr))
        self.assertIn(runs["ours"].pid, runs["ours"].files())  # the same job does write where it may
        self.assertFalse(os.path.exists(runs["missing"].out_dir))
        self.assertEqual(os.listdir(runs["open"].out_dir), [])
        self.assertEqual(os.listdir(os.path.join(os.path.dirname(runs["link"].out_dir), "real")), [])
        if "theirs" in runs:
            self.assertEqual(os.listdir(runs["theirs"].out_dir), [])


# ---------------------------------------------------------------------------------------------
# What a job's DataLoaders record.

LOADER_JOB_NEXT_LINE = 109  # jobs/loader_job.py: `for i, (x, idx) in enumerate(it):`
L0 = {"num_workers": 0, "batch_size": 5, "epochs": 2}
L1 = {"num_workers": 2, "batch_size": 4, "epochs": 2, "prefetch_factor": 3, "pin_memory": True}
L2 = {"num_workers": 2, "batch_size": 8, "epochs": 3, "persistent_workers": True}
SAMPLES = 48


def batches_per_epoch(spec):
    return -(-SAMPLES // spec["batch_size"])


@needs_torch
class LoaderRecordsTest(TempDirTest):
    """One job with three loaders (0 workers; 2 workers; 2 persistent workers), run observed and
    unobserved."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.specs = [L0, L1, L2]
        cls.job, cls.plain = run_all(loader_job(cls.tmp, "observed", cls.specs, samples=SAMPLES),
                                     loader_job(cls.tmp, "plain", cls.specs, observe=False, samples=SAMPLES))
        assert cls.job.rc == 0, cls.job.stderr
        cls.facts = facts_of(cls.job)
        cls.files = cls.job.files()
        cls.main = cls.files.get(cls.job.pid, [])

    def test_results_identical_with_and_without_observer(self):
        self.assertEqual(self.plain.rc, 0, self.plain.stderr)
        self.assertGreater(len(self.job.stdout.splitlines()), 10)
        self.assertEqual(self.job.stdout, self.plain.stdout)

    def test_process_line(self):
        process = self.main[0]
        self.assertEqual(process["main_tid"], self.facts["main_tid"])
        self.assertEqual(process["torch"], self.facts["torch"])
        self.assertEqual(process["python"], "%d.%d.%d" % sys.version_info[:3])
        self.assertEqual(process["observer_version"], 1)
        self.assertTrue(process["argv"][0].endswith("loader_job.py"))

    def test_rows_per_epoch(self):
        for loader, spec in enumerate(self.specs):
            for epoch in range(spec["epochs"]):
                rows = rows_of(self.main, loader, epoch)
                n = batches_per_epoch(spec)
                self.assertEqual([r[0] for r in rows], list(range(n)), (loader, epoch))
                self.assertTrue(all(r[2] > 0 for r in rows), rows)
                starts = [r[1] for r in rows]
                self.assertEqual(starts, sorted(starts))
                for line in of_type(self.main, "batches", loader=loader, epoch=epoch):
                    self.assertEqual(line["tid"], self.facts["main_tid"])
            self.assertEqual(len(of_type(self.main, "epoch", loader=loader)), spec["epochs"])
            self.assertEqual(len(of_type(self.main, "epoch_end", loader=loader)), spec["epochs"])

    def test_batches_name_the_line_that_asked_for_them(self):
        stacks = {r["id"]: r["frames"] for r in of_type(self.main, "stack")}
        self.assertEqual(len(stacks), len(of_type(self.main, "stack")))  # each written once
        job = os.path.join(JOBS, "loader_job.py")
        for loader, spec in enumerate(self.specs):
            for epoch in range(spec["epochs"]):
                for row in rows_of(self.main, loader, epoch):
                    frames = stacks[row[3]]
                    # The job's loop, above the observer's and torch's frames (skipped).
                    self.assertEqual(frames[0], ["main", job, LOADER_JOB_NEXT_LINE], frames)
                    self.assertEqual(frames[-1][:2], ["<module>", job], frames)
        self.assertEqual(len(stacks), 1)  # one loop asked for every batch

    def test_rows_carry_the_batch_tensor_bytes(self):
        # A batch is (rows of 3 float32, their int64 indices): 20 bytes a sample; the last is short.
        for loader, spec in enumerate(self.specs):
            rows = rows_of(self.main, loader, 0)
            sizes = [min(spec["batch_size"], SAMPLES - i * spec["batch_size"]) for i in range(len(rows))]
            self.assertEqual([r[4] for r in rows], [20 * n for n in sizes], loader)

    def test_knobs_match_arguments(self):
        loaders = of_type(self.main, "loader")
        self.assertEqual([r["loader"] for r in loaders], [0, 1, 2])
        for line, passed in zip(loaders, self.facts["passed"]):
            knobs = line["knobs"]
            for name, value in passed.items():
                if name != "shuffle":
                    self.assertEqual(knobs[name], value, name)
            self.assertEqual(knobs["sampler"], "RandomSampler")
            self.assertEqual(knobs["batch_sampler"], "BatchSampler")
            self.assertEqual(knobs["drop_last"], False)
            self.assertEqual(knobs["timeout"], 0)
            self.assertEqual(knobs["dataset"], "__main__.Rows")
            self.assertEqual(knobs["collate_fn"], "torch.utils.data._utils.collate.default_collate")
            self.assertIsNone(knobs["multiprocessing_context"])
            self.assertEqual(knobs["pin_memory_device"], "")
            self.assertEqual(knobs["worker_init_fn"], "functools.partial(__main__.worker_init)")
            self.assertEqual(line["class"], "torch.utils.data.dataloader.DataLoader")
            self.assertEqual((line["overrides_applied"], line["override_error"]), ({}, None))
        if "in_order" in loaders[0]["knobs"]:
            self.assertTrue(all(line["knobs"]["in_order"] is True for line in loaders))

    def test_worker_pids_are_the_real_workers(self):
        real = {w["pid"] for w in self.facts["workers"]}
        seen = []
        for loader, spec in enumerate(self.specs):
            epochs = of_type(self.main, "epoch", loader=loader)
            for e in epochs:
                self.assertEqual(len(e["workers"]), spec["num_workers"], e)
                seen.extend(e["workers"])
            if spec.get("persistent_workers"):
                self.assertEqual([e["reused"] for e in epochs], [False] + [True] * (spec["epochs"] - 1))
                self.assertEqual(len({tuple(e["workers"]) for e in epochs}), 1)
        self.assertEqual(len(real), 2 * 2 + 2)  # two epochs of new workers, one persistent pair
        self.assertEqual(set(seen), real)

    def test_epochs_carry_len_of_the_loader(self):
        for loader, spec in enumerate(self.specs):
            epochs = of_type(self.main, "epoch", loader=loader)
            self.assertEqual([e["batches"] for e in epochs], [batches_per_epoch(spec)] * spec["epochs"], epochs)

    def test_pin_thread(self):
        epochs = [e for loader in range(3) for e in of_type(self.main, "epoch", loader=loader)]
        self.assertEqual([e["pin_tid"] for e in epochs], self.facts["pin_tids"])

    def test_worker_ready_after_worker_init_fn(self):
        starts = {}  # each worker's first epoch
        for e in of_type(self.main, "epoch"):
            for w in e["workers"]:
                starts.setdefault(w, e["start_ns"])
        for worker in self.facts["workers"]:
            records = self.files.get(worker["pid"])
            self.assertIsNotNone(records, "no file for worker %d" % worker["pid"])
            ready = of_type(records, "worker_ready")
            self.assertEqual(len(ready), 1, records)
            self.assertEqual(ready[0]["worker_id"], worker["id"])
            self.assertEqual(ready[0]["parent_pid"], self.job.pid)
            self.assertGreaterEqual(ready[0]["ready_ns"], worker["init_end_ns"])
            self.assertGreater(ready[0]["ready_ns"], starts[worker["pid"]])
            self.assertEqual(records[0]["main_tid"], worker["pid"])
            self.assertFalse(of_type(records, "batches"))

    def test_only_the_job_and_its_workers_write(self):
        self.assertEqual(set(self.files), {self.job.pid} | {w["pid"] for w in self.facts["workers"]})

    def test_timestamps_are_clock_monotonic(self):
        stamps = []
        for records in self.files.values():
            for r in records:
                stamps.extend(r[k] for k in ("start_ns", "ts_ns", "ready_ns") if k in r)
                stamps.extend(row[1] for row in r.get("rows", ()))
                stamps.extend(row[1] + row[2] for row in r.get("rows", ()))
        self.assertGreater(len(stamps), 100)
        self.assertGreaterEqual(min(stamps), self.job.before)
        self.assertLessEqual(max(stamps), self.job.after)
        rows = [row for r in of_type(self.main, "batches") for row in r["rows"]]
        self.assertGreaterEqual(min(row[1] for row in rows), self.facts["t_start"])
        self.assertLessEqual(max(row[1] + row[2] for row in rows), self.facts["t_end"])

    def test_epoch_order_and_summary(self):
        for loader, spec in enumerate(self.specs):
            for epoch in range(spec["epochs"]):
                start = of_type(self.main, "epoch", loader=loader, epoch=epoch)[0]["start_ns"]
                end = of_type(self.main, "epoch_end", loader=loader, epoch=epoch)[0]["ts_ns"]
                rows = rows_of(self.main, loader, epoch)
                self.assertLess(start, rows[0][1])
                self.assertGreaterEqual(end, rows[-1][1] + rows[-1][2])
        summary = of_type(self.main, "summary")
        self.assertEqual(len(summary), 1)
        self.assertEqual(self.main[-1]["type"], "summary")
        total = sum(batches_per_epoch(s) * s["epochs"] for s in self.specs)
        self.assertEqual((summary[0]["batches"], summary[0]["dropped"], summary[0]["errors"]), (total, 0, 0))


@needs_torch
class SpawnTest(TempDirTest):
    """Workers started by spawn: the wrapped worker loop still pickles by reference, each worker
    interpreter installs the observer itself, and each imports the user's sitecustomize once."""

    def test_spawned_workers(self):
        marker = os.path.join(self.tmp, "marker")
        site = write_user_site(os.path.join(self.tmp, "site"), "")
        spec = {"num_workers": 1, "batch_size": 6, "epochs": 1, "context": "spawn"}
        run, = run_all(loader_job(self.tmp, "spawn", [spec], samples=24, user_paths=[site],
                                  extra={"INGERO_TEST_MARKER": marker}))
        self.assertEqual(run.rc, 0, run.stderr)
        facts, files = facts_of(run), run.files()
        epoch, = of_type(files[run.pid], "epoch")
        self.assertEqual(sorted(epoch["workers"]), sorted(w["pid"] for w in facts["workers"]))
        self.assertEqual(of_type(files[run.pid], "loader")[0]["knobs"]["multiprocessing_context"], "spawn")
        for worker in facts["workers"]:
            ready, = of_type(files[worker["pid"]], "worker_ready")
            self.assertEqual((ready["worker_id"], ready["parent_pid"]), (worker["id"], run.pid))
            self.assertGreaterEqual(ready["ready_ns"], worker["init_end_ns"])
        self.assertEqual([r[0] for r in rows_of(files[run.pid], 0, 0)], [0, 1, 2, 3])
        # Every interpreter (the job, its workers, multiprocessing's resource tracker) ran the
        # user's sitecustomize exactly once; only the job and its workers wrote files.
        pids = marker_pids(marker)
        self.assertEqual(len(pids), len(set(pids)), pids)
        self.assertLessEqual({run.pid, *epoch["workers"]}, set(pids))
        self.assertEqual(set(files), {run.pid, *epoch["workers"]})


# ---------------------------------------------------------------------------------------------
# Start-up: no torch, chaining, inert.

def no_torch_job(tmp, name, **env_args):
    base = os.path.join(tmp, name)
    os.makedirs(base)
    facts = os.path.join(base, "facts.json")
    return start([os.path.join(JOBS, "no_torch_job.py"), facts], **env_args), facts


def read_json(path):
    with open(path) as f:
        return json.load(f)


class NoTorchTest(TempDirTest):
    def test_job_without_torch_is_untouched(self):
        out_dir = os.path.join(self.tmp, "observer")
        (observed, observed_facts), (plain, _) = no_torch_job(self.tmp, "observed", out_dir=out_dir), \
            no_torch_job(self.tmp, "plain", observer=False)
        observed, plain = run_all(observed, plain)
        self.assertEqual((observed.rc, observed.stdout, observed.stderr), (3, plain.stdout, plain.stderr))
        self.assertEqual(plain.rc, 3)
        facts = read_json(observed_facts)
        self.assertFalse(facts["torch_loaded"])
        self.assertTrue(facts["observer_loaded"])
        self.assertEqual(os.path.realpath(facts["sitecustomize_file"]),
                         os.path.realpath(os.path.join(OBSERVER_DIR, "sitecustomize.py")))
        self.assertEqual(glob.glob(os.path.join(out_dir, "*")), [])

    def test_chains_to_the_system_sitecustomize(self):
        probe = subprocess.run([PYTHON, "-c", "import sitecustomize as s; print(s.__file__)"], env=_plain_env(),
                               capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
        system = os.path.realpath(probe.stdout.strip()) if probe.returncode == 0 else None
        started, facts = no_torch_job(self.tmp, "system", out_dir=os.path.join(self.tmp, "o2"))
        run, = run_all(started)
        self.assertEqual(run.rc, 3, run.stderr)
        chained = read_json(facts)["chained_file"]
        self.assertEqual(chained and os.path.realpath(chained), system)


class ChainingTest(TempDirTest):
    def test_user_sitecustomize_runs_once(self):
        marker = os.path.join(self.tmp, "marker-once")
        site = write_user_site(os.path.join(self.tmp, "site-once"), "USER_VALUE = 42\n")
        alias = os.path.join(self.tmp, "observer-alias")  # our directory again, by another name
        os.symlink(OBSERVER_DIR, alias)
        started, facts_path = no_torch_job(self.tmp, "once", out_dir=os.path.join(self.tmp, "o-once"),
                                           user_paths=[alias, site], extra={"INGERO_TEST_MARKER": marker})
        run, = run_all(started)
        self.assertEqual(run.rc, 3, run.stderr)
        self.assertEqual(run.stderr, "")
        facts = read_json(facts_path)
        self.assertEqual(marker_pids(marker), [run.pid])
        self.assertTrue(facts["observer_loaded"])
        self.assertEqual(facts["chained_file"], os.path.join(site, "sitecustomize.py"))
        self.assertEqual(facts["user_value"], 42)  # looked up through ours on the user's module

    def test_user_sitecustomize_error_is_reported_as_python_does(self):
        marker = os.path.join(self.tmp, "marker-error")
        site = write_user_site(os.path.join(self.tmp, "site-error"),
                               "raise RuntimeError('user sitecustomize failed')\n")
        extra = {"INGERO_TEST_MARKER": marker}
        (ours, _), (theirs, _) = (no_torch_job(self.tmp, "err-ours", out_dir=os.path.join(self.tmp, "o-err"),
                                               user_paths=[site], extra=extra),
                                  no_torch_job(self.tmp, "err-theirs", observer=False, user_paths=[site],
                                               extra=extra))
        ours, theirs = run_all(ours, theirs)
        self.assertIn("Error in sitecustomize", theirs.stderr)
        self.assertIn("RuntimeError: user sitecustomize failed", theirs.stderr)
        self.assertEqual((ours.rc, ours.stdout, ours.stderr), (theirs.rc, theirs.stdout, theirs.stderr))
        self.assertEqual(sorted(marker_pids(marker)), sorted([ours.pid, theirs.pid]))

    def test_inert_but_chaining_when_off(self):
        """INGERO_OBSERVER=0, or no INGERO_OBSERVER_DIR: the observer is not even imported (so
        nothing can be patched or recorded), and the user's sitecustomize still runs once."""
        site = write_user_site(os.path.join(self.tmp, "site-off"), "USER_VALUE = 7\n")
        out_dir = os.path.join(self.tmp, "o-off")
        markers = {name: os.path.join(self.tmp, "marker-" + name) for name in ("off", "nodir")}
        (off, off_facts), (nodir, nodir_facts) = (
            no_torch_job(self.tmp, "off", out_dir=out_dir, user_paths=[site],
                         extra={"INGERO_TEST_MARKER": markers["off"], "INGERO_OBSERVER": "0"}),
            no_torch_job(self.tmp, "nodir", user_paths=[site], extra={"INGERO_TEST_MARKER": markers["nodir"]}))
        off, nodir = run_all(off, nodir)
        for run, facts_path, name in ((off, off_facts, "off"), (nodir, nodir_facts, "nodir")):
            self.assertEqual((run.rc, run.stderr), (3, ""), name)
            facts = read_json(facts_path)
            self.assertFalse(facts["observer_loaded"], name)
            self.assertEqual(facts["user_value"], 7, name)
            self.assertEqual(marker_pids(markers[name]), [run.pid], name)
        self.assertEqual(os.listdir(out_dir), [])

    @needs_torch
    def test_observer_survives_user_sitecustomize_error(self):
        marker = os.path.join(self.tmp, "marker-torch")
        site = write_user_site(os.path.join(self.tmp, "site-torch"), "raise RuntimeError('boom')\n")
        spec = [{"num_workers": 0, "batch_size": 8, "epochs": 1}]
        run, = run_all(loader_job(self.tmp, "torch", spec, user_paths=[site], extra={"INGERO_TEST_MARKER": marker}))
        self.assertEqual(run.rc, 0, run.stderr)
        self.assertIn("RuntimeError: boom", run.stderr)
        self.assertEqual(marker_pids(marker), [run.pid])
        self.assertTrue(facts_of(run)["observer_loaded"])
        self.assertEqual([r[0] for r in rows_of(run.files()[run.pid], 0, 0)], list(range(6)))


# ---------------------------------------------------------------------------------------------
# Overrides.

@needs_torch
class OverridesTest(TempDirTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        positional = [{"num_workers": 0, "batch_size": 6, "epochs": 1, "positional": True}]
        two = [{"num_workers": 2, "batch_size": 6, "epochs": 1},
               {"num_workers": 2, "batch_size": 6, "epochs": 2, "prefetch_factor": 4, "persistent_workers": True}]
        # bad overrides nothing: its output is the job's own, which the others must match
        cls.workers, cls.prefetch, cls.bad, cls.target = run_all(
            loader_job(cls.tmp, "workers", positional, overrides='{"num_workers": 2}', samples=24),
            loader_job(cls.tmp, "prefetch", positional, overrides='{"prefetch_factor": 4}', samples=24),
            loader_job(cls.tmp, "bad", positional, overrides='{"num_workers": 2', samples=24),
            loader_job(cls.tmp, "target", two, overrides='{"num_workers": 0, "loader": 1}', samples=24))

    def loader_line(self, run, index=0):
        self.assertEqual(run.rc, 0, run.stderr)
        return of_type(run.files()[run.pid], "loader", loader=index)[0]

    def test_num_workers_from_0_to_2(self):
        line = self.loader_line(self.workers)
        self.assertEqual(line["overrides_applied"], {"num_workers": 2})
        self.assertEqual(line["overrides_original"], {"num_workers": 0})
        self.assertEqual(line["knobs"]["num_workers"], 2)
        epoch, = of_type(self.workers.files()[self.workers.pid], "epoch")
        real = [w["pid"] for w in facts_of(self.workers)["workers"]]
        self.assertEqual(len(real), 2)
        self.assertEqual(sorted(epoch["workers"]), sorted(real))
        self.assertEqual(self.workers.stdout, self.bad.stdout)  # the same batches, loaded by workers

    def test_prefetch_factor_without_workers_is_not_applicable(self):
        line = self.loader_line(self.prefetch)
        self.assertEqual(line["overrides_applied"], {})
        self.assertIn("prefetch_factor", line["overrides_not_applicable"])
        self.assertEqual(line["knobs"]["num_workers"], 0)
        self.assertEqual(self.prefetch.stdout, self.bad.stdout)

    def test_bad_json_is_reported_and_nothing_overridden(self):
        line = self.loader_line(self.bad)
        self.assertIn("not JSON", line["override_error"])
        self.assertEqual(line["overrides_applied"], {})
        self.assertEqual(line["knobs"]["num_workers"], 0)
        summary, = of_type(self.bad.files()[self.bad.pid], "summary")
        self.assertEqual(summary["override_error"], line["override_error"])
        self.assertEqual(len(self.bad.stdout.splitlines()), 5)

    def test_only_the_chosen_loader_and_what_needs_workers_follows(self):
        first, second = self.loader_line(self.target, 0), self.loader_line(self.target, 1)
        self.assertEqual((first["overrides_applied"], first["knobs"]["num_workers"]), ({}, 2))
        self.assertEqual(second["knobs"]["num_workers"], 0)
        self.assertEqual(second["overrides_original"],
                         {"num_workers": 2, "prefetch_factor": 4, "persistent_workers": True})
        self.assertEqual(second["overrides_applied"],
                         {"num_workers": 0, "prefetch_factor": second["knobs"]["prefetch_factor"],
                          "persistent_workers": False})
        self.assertNotEqual(second["knobs"]["prefetch_factor"], 4)
        records = self.target.files()[self.target.pid]
        self.assertEqual([len(e["workers"]) for e in of_type(records, "epoch", loader=1)], [0, 0])
        self.assertEqual([len(rows_of(records, 1, e)) for e in (0, 1)], [4, 4])


class BatchStackCostTest(TempDirTest):
    """What naming each batch's caller stack adds to a batch's record, in-process (no torch)."""

    def test_added_cost_per_batch(self):
        obs_module = _load_observer_module()
        out_dir = os.path.join(self.tmp, "cost")
        os.mkdir(out_dir, 0o700)
        obs = obs_module._Observer(out_dir, None)
        epoch = obs_module._Epoch(0, 0, None)
        n = 20000

        def timed(depth):
            if depth:
                return timed(depth - 1)
            start = time.perf_counter_ns()
            for _ in range(n):
                obs.batch(epoch, 0, 1)
            return (time.perf_counter_ns() - start) / n

        def best(stacks):
            obs.stacks = {}
            if not stacks:
                obs._stack_locked = lambda frame: None
            else:
                obs.__dict__.pop("_stack_locked", None)
            return min(timed(30) for _ in range(3))

        plain, named = best(False), best(True)
        obs.finish()
        added_us = (named - plain) / 1e3
        print("\nbatch record: %.2f us, with its caller stack %.2f us (+%.2f us, depth 16)" %
              (plain / 1e3, named / 1e3, added_us), file=sys.stderr)
        self.assertEqual(len(obs.stacks), 1)
        self.assertLess(added_us, 20)


class OverrideRulesTest(unittest.TestCase):
    """The override rules in-process, against DataLoader signatures of torch 1.13 and 2.6+."""

    @classmethod
    def setUpClass(cls):
        cls.obs = _load_observer_module()

    @staticmethod
    def init_113(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                 collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                 multiprocessing_context=None, generator=None, *, prefetch_factor=2, persistent_workers=False,
                 pin_memory_device=""):
        pass

    @staticmethod
    def init_26(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0,
                collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None,
                multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False,
                pin_memory_device="", in_order=True):
        pass

    def plan(self, init, overrides, *args, **kwargs):
        parsed, error = self.obs._parse_overrides(json.dumps(overrides))
        self.assertIsNone(error)
        plan = self.obs._Plan(0, 0)
        self.obs._plan_overrides(plan, parsed, inspect.signature(init), object(), args, kwargs)
        call = inspect.signature(init).bind(None, *plan.args, **plan.kwargs).arguments
        return plan, call

    def test_replaces_positional_and_missing_arguments(self):
        plan, call = self.plan(self.init_113, {"num_workers": 3, "pin_memory": True}, "ds", 8, True, None, None, 0)
        self.assertEqual((call["num_workers"], call["pin_memory"], call["batch_size"], call["shuffle"]),
                         (3, True, 8, True))
        self.assertEqual(plan.original, {"num_workers": 0, "pin_memory": False})
        self.assertEqual(plan.applied, {"num_workers": 3, "pin_memory": True})

    def test_prefetch_without_workers(self):
        for init in (self.init_113, self.init_26):
            plan, call = self.plan(init, {"prefetch_factor": 4, "persistent_workers": True}, "ds")
            self.assertEqual(plan.applied, {})
            self.assertEqual(set(plan.not_applicable), {"prefetch_factor", "persistent_workers"})
            self.assertNotIn("prefetch_factor", call)

    def test_taking_workers_away_resets_what_needs_them(self):
        plan, call = self.plan(self.init_26, {"num_workers": 0}, "ds", num_workers=4, prefetch_factor=8,
                               persistent_workers=True, timeout=5, multiprocessing_context="spawn")
        self.assertEqual(call, {"self": None, "dataset": "ds", "num_workers": 0})
        self.assertEqual(plan.original, {"num_workers": 4, "prefetch_factor": 8, "persistent_workers": True,
                                         "timeout": 5, "multiprocessing_context": "spawn"})
        self.assertEqual(plan.applied, {"num_workers": 0, "prefetch_factor": None, "persistent_workers": False,
                                        "timeout": 0, "multiprocessing_context": None})

    def test_argument_this_torch_lacks(self):
        plan, call = self.plan(self.init_113, {"in_order": False}, "ds")
        self.assertEqual(list(plan.not_applicable), ["in_order"])
        self.assertNotIn("in_order", call)
        plan, call = self.plan(self.init_26, {"in_order": False}, "ds")
        self.assertEqual(call["in_order"], False)

    def test_arguments_that_do_not_bind_are_left_to_the_job(self):
        parsed, _ = self.obs._parse_overrides('{"num_workers": 2}')
        plan = self.obs._Plan(0, 0)
        self.obs._plan_overrides(plan, parsed, inspect.signature(self.init_113), object(), (), {"bogus": 1})
        self.assertIsNone(plan.args)

    def test_bad_overrides(self):
        for text, says in (('{"num_workers": 2', "not JSON"), ("[1]", "not a JSON object"),
                           ('{"batch_size": 2}', "unknown key"), ('{"num_workers": "2"}', "not a valid"),
                           ('{"num_workers": true}', "not a valid"), ('{"num_workers": -1}', "not a valid"),
                           ('{"prefetch_factor": 0}', "not a valid"), ('{"loader": 1.5}', "not a valid")):
            parsed, error = self.obs._parse_overrides(text)
            self.assertIsNone(parsed, text)
            self.assertIn(says, error, text)

    def test_loader_index_selects(self):
        observer = self.obs._Observer(tempfile.gettempdir(), '{"num_workers": 2, "loader": 1}')
        signature = inspect.signature(self.init_113)
        plans = [observer.loader_begin(object(), signature, ("ds",), {}) for _ in range(3)]
        self.assertEqual([p.index for p in plans], [0, 1, 2])
        self.assertEqual([p.applied for p in plans], [{}, {"num_workers": 2}, {}])


# ---------------------------------------------------------------------------------------------
# Failures of the job: exceptions, signals, fork.

@needs_torch
class ErrorsTest(TempDirTest):
    """An exception of the job's own dataset, and an error of the observer's own."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()

        def spec(workers):
            return [{"num_workers": workers, "batch_size": 4, "epochs": 1, "shuffle": False}]
        odd = [{"num_workers": 0, "batch_size": 8, "epochs": 1, "odd_collate": True}]
        cls.plain, cls.raise0, cls.raise2, cls.odd, cls.odd_plain = run_all(
            loader_job(cls.tmp, "plain", spec(0), observe=False, raise_at=13),
            loader_job(cls.tmp, "raise0", spec(0), raise_at=13),
            loader_job(cls.tmp, "raise2", spec(2), raise_at=13),
            loader_job(cls.tmp, "odd", odd),
            loader_job(cls.tmp, "odd-plain", odd, observe=False))

    def test_dataset_exception_reaches_the_job_unchanged(self):
        plain = self.plain
        self.assertNotEqual(plain.rc, 0)
        self.assertEqual(plain.stderr.strip().splitlines()[-1], "ValueError: bad sample 13")
        for workers, run in ((0, self.raise0), (2, self.raise2)):
            # With workers PyTorch re-raises the worker's exception in the job: the same type, its
            # message ending with the original one.
            self.assertEqual(run.rc, plain.rc)
            self.assertEqual(run.stdout, plain.stdout)
            self.assertEqual(run.stderr.strip().splitlines()[-1], "ValueError: bad sample 13")
            if workers == 0:  # the whole traceback, but for the observer's own frame
                self.assertEqual(without_observer_frames(run.stderr), plain.stderr)
            records = run.files()[run.pid]
            self.assertEqual([r[0] for r in rows_of(records, 0, 0)], [0, 1, 2], workers)
            self.assertEqual(of_type(records, "epoch_end"), [])
            self.assertEqual(of_type(records, "summary")[0]["errors"], 0)

    def test_a_traceback_after_the_observer_files_are_gone_still_makes_sense(self):
        # The harness removes the observer's files after the run; a traceback the job prints (or a
        # process outliving the run prints) once named a frame in that removed file, without its line.
        observer_copy = os.path.join(self.tmp, "gone-observer")
        shutil.copytree(OBSERVER_DIR, observer_copy, ignore=shutil.ignore_patterns("__pycache__"))
        job = os.path.join(self.tmp, "gone_job.py")
        with open(job, "w") as f:
            f.write("import shutil, sys, traceback\n"
                    "from torch.utils.data import DataLoader\n"
                    "class Samples:\n"
                    "    def __len__(self): return 10\n"
                    "    def __getitem__(self, i):\n"
                    "        if i == 5: raise ValueError('bad sample 5')\n"
                    "        return i\n"
                    "try:\n"
                    "    for batch in DataLoader(Samples(), batch_size=2): pass\n"
                    "except ValueError as e:\n"
                    "    shutil.rmtree(sys.argv[1])\n"
                    "    print(''.join(traceback.format_exception(e)))\n"
                    "    raise\n")
        env = job_env(out_dir=os.path.join(self.tmp, "gone-out"), observer=False,
                      extra={"PYTHONPATH": observer_copy})
        os.mkdir(env["INGERO_OBSERVER_DIR"], 0o700)
        run = subprocess.run([PYTHON, job, observer_copy], env=env, capture_output=True, text=True,
                             timeout=JOB_TIMEOUT_S)
        self.assertNotEqual(run.returncode, 0)
        self.assertFalse(os.path.exists(observer_copy))
        # As the traceback module formats it (logging, print_exc) and as Python prints it at exit.
        for text in (run.stdout, run.stderr):
            self.assertEqual(text.strip().splitlines()[-1], "ValueError: bad sample 5", text)
            self.assertNotIn(observer_copy, text)
            self.assertEqual(sum(line.startswith(OBSERVER_FRAME) for line in text.splitlines()), 1, text)
        lines = run.stdout.splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith(OBSERVER_FRAME))
        self.assertTrue(lines[at].endswith(", in __next__"), lines[at])
        self.assertEqual(lines[at + 1].strip(), "data = original(self)")

    def test_observer_error_is_counted_not_raised(self):
        run, plain = self.odd, self.odd_plain
        self.assertEqual((run.rc, run.stdout, run.stderr), (0, plain.stdout, plain.stderr))
        records = run.files()[run.pid]
        line, = of_type(records, "loader")
        self.assertIsNone(line["knobs"]["collate_fn"])
        self.assertEqual(line["knobs"]["batch_size"], 8)
        self.assertEqual([r[0] for r in rows_of(records, 0, 0)], list(range(6)))
        summary, = of_type(records, "summary")
        self.assertEqual(summary["errors"], 1)
        self.assertIn("OddCollate has no attribute", summary["error_sample"])


@needs_torch
class SignalTest(TempDirTest):
    """A job stopped mid-epoch: what was flushed is readable, line by line."""

    @staticmethod
    def stop_after(proc, batches, sig):
        seen = []
        while len(seen) < batches:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line)
        sent = time.monotonic_ns()
        proc.send_signal(sig)
        return seen, sent

    def test_sigterm_and_sigint(self):
        started = {}
        for sig in (signal.SIGTERM, signal.SIGINT):
            out_dir = os.path.join(self.tmp, sig.name)
            started[sig] = start([os.path.join(JOBS, "slow_job.py")], out_dir=out_dir)
        printed, sent = {}, {}
        for sig, (proc, _, _) in started.items():
            printed[sig], sent[sig] = self.stop_after(proc, 40, sig)
        runs = dict(zip(started, run_all(*started.values())))

        term = runs[signal.SIGTERM]
        self.assertEqual(term.rc, -signal.SIGTERM)
        records = term.files(allow_partial_last=True)[term.pid]
        rows = sorted((r["epoch"], row[0], row[1]) for r in of_type(records, "batches") for row in r["rows"])
        self.assertEqual([(e, i) for e, i, _ in rows], [(0, i) for i in range(len(rows))])
        # Rows are written when one comes 0.5 s after the last write: at most the last 0.5 s (and one
        # batch, and scheduling on a busy machine) is lost.
        self.assertGreater(rows[-1][2], sent[signal.SIGTERM] - 500_000_000 - 300_000_000)

        interrupted = runs[signal.SIGINT]
        self.assertNotEqual(interrupted.rc, 0)
        self.assertIn("KeyboardInterrupt", interrupted.stderr)
        records = interrupted.files()[interrupted.pid]
        total = sum(len(r["rows"]) for r in of_type(records, "batches"))
        self.assertGreaterEqual(total, len(printed[signal.SIGINT]) + interrupted.stdout.count("batch"))
        self.assertEqual(records[-1]["type"], "summary")
        self.assertEqual(records[-1]["batches"], total)


@needs_torch
class ForkTest(TempDirTest):
    def test_forked_child_has_its_own_file_and_buffer(self):
        out_dir = os.path.join(self.tmp, "observer")
        run, = run_all(start([os.path.join(JOBS, "fork_job.py")], out_dir=out_dir))
        self.assertEqual(run.rc, 0, run.stderr)
        child_pid = int(next(line.split()[1] for line in run.stdout.splitlines() if line.startswith("child")))
        files = run.files()
        self.assertEqual(set(files), {run.pid, child_pid})
        parent, child = files[run.pid], files[child_pid]
        self.assertEqual([r[0] for r in rows_of(parent, 0, 0)], list(range(16)))
        self.assertEqual([r[0] for r in rows_of(child, 0, 0)], [5, 6, 7])  # not the parent's 1..4
        self.assertEqual([r[0] for r in rows_of(child, 1, 0)], [0, 1, 2, 3])
        self.assertEqual(of_type(parent, "loader", loader=1), [])
        self.assertEqual(child[0]["parent_pid"], run.pid)
        self.assertEqual(child[0]["main_tid"], child_pid)
        self.assertEqual([r["loader"] for r in of_type(child, "loader")], [0, 1])
        self.assertEqual(of_type(child, "summary")[0]["batches"], 7)


if __name__ == "__main__":
    unittest.main()
