#!/usr/bin/env python3
"""The cluster examples of docs/scale-out/ are valid and work.

Parses the Kubernetes manifest (PyYAML when installed, else the small
block-YAML reader below, enough for the file's subset) and the Slurm script's
#SBATCH lines; checks the fields an Indexed Job and a job array need; checks
that every `tracetable SUB --flag` they run exists in `tracetable SUB --help`;
then runs their shell steps here, as the engines would: every index at once
(concurrent --shard-of writers) with the index variable set and the shared
volume replaced by a scratch folder, then the finish step, and checks the run
verifies with every host in it.

  scale_out_test.py TRACETABLE TT_GEN_TRACE DOCS_SCALE_OUT_DIR
"""
import json, os, re, shutil, subprocess, sys, tempfile

failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def scalar(text):
    t = text.strip()
    if t.startswith("[") or t.startswith("{"):
        return json.loads(t)
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "\"'":
        return t[1:-1]
    if re.fullmatch(r"-?\d+", t):
        return int(t)
    return {"true": True, "false": False}.get(t, t)


def strip_comment(line):
    out, quote = [], None
    for i, c in enumerate(line):
        if quote:
            quote = None if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] == " "):
            break
        out.append(c)
    return "".join(out).rstrip()


def parse_block(lines, i, indent):
    """Parses the node whose lines start at lines[i] with this indent."""
    if lines[i][1].startswith("- "):
        seq = []
        while i < len(lines) and lines[i][0] == indent and lines[i][1].startswith("- "):
            rest = lines[i][1][2:]
            if re.match(r"^[\w.-]+:( |$)", rest):  # "- key: value" opens a mapping
                lines[i] = (indent + 2, rest, lines[i][2])
                node, i = parse_block(lines, i, indent + 2)
            elif rest == "|":
                node, i = literal(lines, i + 1, indent)
            else:
                node, i = scalar(rest), i + 1
            seq.append(node)
        return seq, i
    mapping = {}
    while i < len(lines) and lines[i][0] == indent and not lines[i][1].startswith("- "):
        key, _, value = lines[i][1].partition(":")
        value = value.strip()
        if value == "|":
            mapping[key], i = literal(lines, i + 1, indent)
        elif value:
            mapping[key], i = scalar(value), i + 1
        elif i + 1 < len(lines) and (lines[i + 1][0] > indent or lines[i + 1][1].startswith("- ")):
            mapping[key], i = parse_block(lines, i + 1, lines[i + 1][0])
        else:
            mapping[key], i = None, i + 1
    return mapping, i


def literal(lines, i, parent_indent):
    body = []
    while i < len(lines) and lines[i][0] > parent_indent:
        body.append(lines[i][2])
        i += 1
    cut = min(len(l) - len(l.lstrip()) for l in body)
    return "\n".join(l[cut:] for l in body) + "\n", i


def mini_yaml(text):
    docs = []
    for doc in re.split(r"^---\s*$", text, flags=re.M):
        lines = []
        for raw in doc.splitlines():
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            # Literal blocks keep their text; comments inside them are shell.
            lines.append((len(raw) - len(raw.lstrip()), raw.strip() if "#" not in raw else strip_comment(raw).strip(), raw))
        if lines:
            docs.append(parse_block(lines, 0, lines[0][0])[0])
    return docs


def load_yaml(text):
    try:
        import yaml
    except ImportError:
        return mini_yaml(text)
    docs = [d for d in yaml.safe_load_all(text) if d]
    check(docs == mini_yaml(text), "the small YAML reader disagrees with PyYAML")
    return docs


def check_commands(tt, script, where):
    subs = subprocess.run([tt, "--help"], capture_output=True, text=True).stdout + \
        subprocess.run([tt, "--help"], capture_output=True, text=True).stderr
    found = 0
    for line in script.splitlines():
        for m in re.finditer(r"\btracetable\s+(\w+)([^\n|;&]*)", line):
            sub, rest = m.group(1), m.group(2)
            found += 1
            check(re.search(r"^\s+%s\s" % sub, subs, re.M) is not None, "%s: no subcommand %s" % (where, sub))
            h = subprocess.run([tt, sub, "--help"], capture_output=True, text=True)
            help_text = h.stdout + h.stderr
            for flag in re.findall(r"(?<![\w-])(--[\w-]+)", rest):
                check(re.search(r"(?<![\w-])%s\b" % re.escape(flag), help_text) is not None,
                      "%s: tracetable %s has no %s" % (where, sub, flag))
    check(found > 0, "%s runs no tracetable command" % where)


def run_steps(tt, inputs, scripts, env_index, finish, where):
    """Every index at once, then the finish step; returns the run path."""
    work = tempfile.mkdtemp()
    run = os.path.join(work, "run.tracetable")
    env = dict(os.environ, INPUTS=inputs, RUN=run, PATH=os.path.dirname(tt) + os.pathsep + os.environ["PATH"])
    procs = []
    for i in range(len(os.listdir(inputs))):
        procs.append(subprocess.Popen(scripts(i), env=dict(env, **{env_index: str(i)}),
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    for i, p in enumerate(procs):
        out, _ = p.communicate()
        check(p.returncode == 0, "%s index %d failed: %s" % (where, i, out))
    f = subprocess.run(finish, env=env, capture_output=True, text=True)
    check(f.returncode == 0, "%s finish step failed: %s %s" % (where, f.stdout, f.stderr))
    check(re.search(r"^OK: run of %d hosts" % len(procs), f.stdout, re.M) is not None,
          "%s: finish did not verify the run: %s" % (where, f.stdout))
    info = json.loads(subprocess.run([tt, "info", run, "--json"], capture_output=True, text=True, check=True).stdout)
    grids = {(s["start_us"], s["levels"]) for s in info["shards"]}
    hosts = [s["host"] for s in info["shards"]]
    check(hosts == sorted(h.split(".")[0] for h in os.listdir(inputs)), "%s: hosts %s" % (where, hosts))
    shards_grid = set()
    for s in info["shards"]:
        si = json.loads(subprocess.run([tt, "info", os.path.join(run, s["dir"]), "--json"], capture_output=True,
                                       text=True, check=True).stdout)
        shards_grid.add((si["start_us"], si["levels"]))
    check(len(shards_grid) == 1, "%s: shards on %d grids after the finish step" % (where, len(shards_grid)))
    shutil.rmtree(work)


def main():
    tt, gen, folder = sys.argv[1:4]
    tt = os.path.abspath(tt)
    inputs = tempfile.mkdtemp()
    for i in range(3):
        subprocess.run([gen, "--events", "20000", "--hosts", "1", "--devices", "2", "--seed", str(i + 1),
                        "--base-us", str(1700000000000000 + 5000 * i), "-o", os.path.join(inputs, "h%d.json" % i)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    docs = load_yaml(open(os.path.join(folder, "k8s-indexed-job.yaml")).read())
    check(len(docs) == 2, "want a Job and the finish step's template, got %d documents" % len(docs))
    job, finish = docs[0], docs[1]
    check(job.get("apiVersion") == "batch/v1" and job.get("kind") == "Job", "first document is not a batch/v1 Job")
    spec = job["spec"]
    check(spec.get("completionMode") == "Indexed", "the Job is not Indexed")
    check(isinstance(spec.get("completions"), int) and spec["completions"] > 0, "completions")
    check(isinstance(spec.get("parallelism"), int) and 0 < spec["parallelism"] <= spec["completions"], "parallelism")
    pod = spec["template"]["spec"]
    check(pod.get("restartPolicy") in ("Never", "OnFailure"), "restartPolicy")
    c = pod["containers"][0]
    shard_script = c["args"][0]
    check(c["command"] == ["/bin/bash", "-c"], "command")
    check("JOB_COMPLETION_INDEX" in shard_script, "the pod does not pick its input by JOB_COMPLETION_INDEX")
    mounts = {m["name"] for m in c["volumeMounts"]}
    check(mounts <= {v["name"] for v in pod["volumes"]}, "a mount without a volume")
    check(finish.get("kind") == "CronJob" and finish["spec"].get("suspend") is True, "finish step template")
    fc = finish["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    finish_script = fc["args"][0]
    check_commands(tt, shard_script, "k8s shard")
    check_commands(tt, finish_script, "k8s finish")
    run_steps(tt, inputs, lambda i: ["/bin/bash", "-c", shard_script], "JOB_COMPLETION_INDEX",
              ["/bin/bash", "-c", finish_script], "k8s")

    sbatch = os.path.join(folder, "slurm-array.sbatch")
    text = open(sbatch).read()
    directives = dict(re.findall(r"^#SBATCH\s+--([\w-]+)=(\S+)", text, re.M))
    check(re.fullmatch(r"\d+-\d+(%\d+)?", directives.get("array", "")) is not None, "#SBATCH --array")
    check("SLURM_ARRAY_TASK_ID" in text, "the task does not pick its input by SLURM_ARRAY_TASK_ID")
    check(subprocess.run(["bash", "-n", sbatch]).returncode == 0, "slurm-array.sbatch is not valid bash")
    check_commands(tt, text, "slurm")
    run_steps(tt, inputs, lambda i: ["bash", sbatch], "SLURM_ARRAY_TASK_ID",
              ["bash", "-c", "STEP=finish exec bash \"$0\"", sbatch], "slurm")
    shutil.rmtree(inputs)
    print("%d failures" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
