// Copyright ©2026 The repro Authors. All rights reserved.
// Use of this source code is governed by a BSD-style licence
// that can be found in the LICENSE file.

package slurm

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/repro-dp/repro/internal/results"
	"github.com/repro-dp/repro/runners"
)

// A Job says what the tasks of a submission execute.
type Job struct {
	// Exe is the repro binary the tasks run: an absolute path that every
	// compute node sees.
	Exe string
	// Root is the results folder: an absolute path on a filesystem that
	// every compute node shares.
	Root string
	// Experiment is the experiment's name (its folder under Root), and
	// Spec the argument that names it to repro: the name of an embedded
	// spec, or the absolute path of a spec file.
	Experiment, Spec string
	// SpecArgs are the flags that resolve the experiment's runs
	// (--scale, --seeds, --set), given to every task as they are.
	SpecArgs []string
	// Fresh makes the tasks run their runs again even if finished.
	Fresh bool
	// Bases lists the pretrained bases the runs need, each as the
	// arguments of repro pretrain that build it (--scale smoke --arch
	// tinymllm). One job builds them all before any task starts; none
	// means no pretraining job.
	Bases [][]string
}

// Options are the sbatch options of a submission. The zero value submits
// to the cluster's default partition with its default limits.
type Options struct {
	// Partition, Time (a Slurm time limit such as 2:00:00) and Mem (such
	// as 4G) are given to sbatch as --partition, --time and --mem when
	// not empty.
	Partition, Time, Mem string
	// CPUsPerTask is given as --cpus-per-task when > 0.
	CPUsPerTask int
	// ArrayLimit caps the tasks of an array that run at once (--array
	// 0-N%K) when > 0.
	ArrayLimit int
	// SbatchArgs are given to every sbatch call as they are, after the
	// options above.
	SbatchArgs []string
	// Retries is the number of times a task executes its run again after
	// the run failed.
	Retries int
	// Poll is the interval at which Wait reads squeue and the run
	// folders; 0 means 2 seconds.
	Poll time.Duration
	// Log receives what a submission does (job ids, warnings); nil means
	// none.
	Log io.Writer
}

// A Submission is one submission of runs of an experiment, as
// submission.json in its folder records it.
type Submission struct {
	// Dir is the submission's folder, Root/EXP/.slurm/NAME.
	Dir        string    `json:"-"`
	Experiment string    `json:"experiment"`
	Submitted  time.Time `json:"submitted"`
	// Pretrain is the id of the pretraining job, "" if none.
	Pretrain string `json:"pretrain,omitempty"`
	// Arrays are the ids of the array jobs; array i runs the tasks
	// Offsets[i], Offsets[i]+1, … of Runs.
	Arrays  []string `json:"arrays"`
	Offsets []int    `json:"offsets"`
	// Runs are the run ids, in task order.
	Runs []string `json:"runs"`
}

// Jobs returns the ids of every job of s, the pretraining job first.
func (s *Submission) Jobs() []string {
	var ids []string
	if s.Pretrain != "" {
		ids = append(ids, s.Pretrain)
	}
	return append(ids, s.Arrays...)
}

// submissionsDir returns the folder of the submissions of experiment exp
// under root.
func submissionsDir(root, exp string) string { return filepath.Join(root, exp, ".slurm") }

// defaultMaxArraySize is Slurm's default MaxArraySize.
const defaultMaxArraySize = 1001

// ErrNoSlurm is returned (wrapped) when a Slurm command is not on PATH.
var ErrNoSlurm = errors.New("slurm: not available")

// Available returns nil if the Slurm commands repro uses (sbatch, squeue,
// scancel, scontrol, srun) are on PATH, and an error wrapping ErrNoSlurm
// naming the first missing one otherwise.
func Available() error {
	for _, c := range []string{"sbatch", "squeue", "scancel", "scontrol", "srun"} {
		if _, err := exec.LookPath(c); err != nil {
			return fmt.Errorf("%w: %s is not on PATH (is this a Slurm login node?)", ErrNoSlurm, c)
		}
	}
	return nil
}

// command runs a Slurm command and returns its standard output; the
// error carries its standard error.
func command(ctx context.Context, name string, args ...string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = strings.TrimSpace(out.String())
		}
		return out.String(), fmt.Errorf("slurm: %s %s: %v: %s", name, strings.Join(args, " "), err, msg)
	}
	return out.String(), nil
}

// MaxArraySize returns the cluster's MaxArraySize (scontrol show config):
// an array's task indices must be below it.
func MaxArraySize(ctx context.Context) (int, error) {
	out, err := command(ctx, "scontrol", "show", "config")
	if err != nil {
		return 0, err
	}
	return parseMaxArraySize(out), nil
}

// parseMaxArraySize reads MaxArraySize from the output of scontrol show
// config, or returns Slurm's default if it is not there.
func parseMaxArraySize(config string) int {
	for line := range strings.SplitSeq(config, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if ok && strings.TrimSpace(k) == "MaxArraySize" {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
				return n
			}
		}
	}
	return defaultMaxArraySize
}

// chunks splits n tasks into arrays of at most max tasks (indices 0 to
// max-1) and returns the offset and size of each.
func chunks(n, max int) (offsets, sizes []int) {
	for off := 0; off < n; off += max {
		offsets, sizes = append(offsets, off), append(sizes, min(max, n-off))
	}
	return offsets, sizes
}

// sbatchOptions returns the sbatch options of o.
func (o *Options) sbatchOptions() []string {
	var args []string
	if o.Partition != "" {
		args = append(args, "--partition="+o.Partition)
	}
	if o.Time != "" {
		args = append(args, "--time="+o.Time)
	}
	if o.Mem != "" {
		args = append(args, "--mem="+o.Mem)
	}
	if o.CPUsPerTask > 0 {
		args = append(args, "--cpus-per-task="+strconv.Itoa(o.CPUsPerTask))
	}
	return append(args, o.SbatchArgs...)
}

func (o *Options) logf(format string, args ...any) {
	if o.Log != nil {
		fmt.Fprintf(o.Log, format, args...)
	}
}

// quote returns s quoted for a POSIX shell.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func quoteAll(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = quote(a)
	}
	return strings.Join(q, " ")
}

// probeFile is the file a compute node must see in the submission folder.
const probeFile = "probe"

// jobScript returns the script every task of the submission in dir runs.
func jobScript(job *Job, dir string, retries int) string {
	args := []string{"task", "--results", job.Root}
	args = append(args, job.SpecArgs...)
	if job.Fresh {
		args = append(args, "--fresh")
	}
	args = append(args, "--", job.Spec)
	var b strings.Builder
	fmt.Fprintf(&b, `#!/bin/sh
# Written by repro run --executor slurm: one task executes one run of
# experiment %[1]s, the run on line REPRO_OFFSET+SLURM_ARRAY_TASK_ID+1 of
# runs.txt, into the results folder %[2]s.
set -u
dir=%[3]s
if ! test -f "$dir/%[4]s"; then
	echo "repro: $(hostname) does not see the results folder %[2]s: it must be on a filesystem every compute node shares" >&2
	exit 3
fi
line=$((${REPRO_OFFSET:-0} + SLURM_ARRAY_TASK_ID + 1))
id=$(sed -n "${line}p" "$dir/runs.txt")
if test -z "$id"; then
	echo "repro: no run on line $line of $dir/runs.txt" >&2
	exit 3
fi
retries=%[5]d
attempt=0
while :; do
	%[6]s %[7]s "$id" && exit 0
	rc=$?
	if test "$rc" -gt 128 || test "$attempt" -ge "$retries"; then
		exit "$rc"
	fi
	attempt=$((attempt + 1))
	echo "repro: run $id failed (exit status $rc); attempt $((attempt + 1)) of $((retries + 1))" >&2
done
`, job.Experiment, job.Root, quote(dir), probeFile, retries, quote(job.Exe), quoteAll(args))
	return b.String()
}

// pretrainScript returns the script of the pretraining job: repro
// pretrain for each base, into the cache under the results folder.
func pretrainScript(job *Job) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# Written by repro run --executor slurm: the pretrained bases the runs of\n# experiment %s need, built once before its tasks start.\nset -eu\n", job.Experiment)
	for _, base := range job.Bases {
		args := append([]string{"pretrain", "--results", job.Root, "--quiet"}, base...)
		fmt.Fprintf(&b, "%s %s\n", quote(job.Exe), quoteAll(args))
	}
	return b.String()
}

// Submit submits runs of job as described in the package documentation
// and returns the submission; it submits nothing and returns nil, nil if
// runs is empty. On an error nothing stays submitted.
func Submit(ctx context.Context, job *Job, o *Options, runs []*runners.Run) (*Submission, error) {
	if o == nil {
		o = &Options{}
	}
	if len(runs) == 0 {
		return nil, nil
	}
	if !filepath.IsAbs(job.Root) || !filepath.IsAbs(job.Exe) {
		return nil, fmt.Errorf("slurm: the results folder %q and the repro binary %q must be absolute paths", job.Root, job.Exe)
	}
	if err := Available(); err != nil {
		return nil, err
	}
	maxArray, err := MaxArraySize(ctx)
	if err != nil {
		return nil, err
	}
	sub, err := newSubmission(job, runs)
	if err != nil {
		return nil, err
	}
	if err := sub.write(job, o); err != nil {
		return nil, err
	}
	if err := probe(ctx, sub.Dir, o); err != nil {
		return nil, err
	}
	opts := o.sbatchOptions()
	if len(job.Bases) > 0 {
		args := append([]string{"--parsable", "--job-name=repro-pretrain-" + job.Experiment,
			"--output=" + filepath.Join(sub.Dir, "pretrain-%j.out")}, opts...)
		if sub.Pretrain, err = sbatch(ctx, append(args, filepath.Join(sub.Dir, "pretrain.sh"))); err != nil {
			return nil, err
		}
	}
	offsets, sizes := chunks(len(runs), maxArray)
	for i, off := range offsets {
		array := fmt.Sprintf("--array=0-%d", sizes[i]-1)
		if o.ArrayLimit > 0 {
			array += fmt.Sprintf("%%%d", o.ArrayLimit)
		}
		args := []string{"--parsable", array, "--requeue", "--job-name=repro-" + job.Experiment,
			"--output=" + filepath.Join(sub.Dir, "task-%A_%a.out"), "--open-mode=append",
			"--export=ALL,REPRO_OFFSET=" + strconv.Itoa(off)}
		if sub.Pretrain != "" {
			args = append(args, "--dependency=afterok:"+sub.Pretrain, "--kill-on-invalid-dep=yes")
		}
		args = append(args, opts...)
		id, err := sbatch(ctx, append(args, filepath.Join(sub.Dir, "job.sh")))
		if err != nil {
			cancel(context.WithoutCancel(ctx), sub.Jobs())
			return nil, err
		}
		sub.Arrays, sub.Offsets = append(sub.Arrays, id), append(sub.Offsets, off)
	}
	b, err := json.MarshalIndent(sub, "", "  ")
	if err == nil {
		err = results.WriteFile(filepath.Join(sub.Dir, "submission.json"), append(b, '\n'))
	}
	if err != nil {
		cancel(context.WithoutCancel(ctx), sub.Jobs())
		return nil, fmt.Errorf("slurm: %w", err)
	}
	if sub.Pretrain != "" {
		o.logf("%s: submitted the pretraining of %d base(s) as job %s\n", job.Experiment, len(job.Bases), sub.Pretrain)
	}
	o.logf("%s: submitted %d runs as job array %s (%s)\n", job.Experiment, len(runs), strings.Join(sub.Arrays, ", "), sub.Dir)
	return sub, nil
}

// newSubmission makes the folder of a new submission of runs.
func newSubmission(job *Job, runs []*runners.Run) (*Submission, error) {
	parent := submissionsDir(job.Root, job.Experiment)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	now := time.Now().UTC()
	dir, err := os.MkdirTemp(parent, now.Format("20060102T150405")+"-")
	if err != nil {
		return nil, fmt.Errorf("slurm: %w", err)
	}
	sub := &Submission{Dir: dir, Experiment: job.Experiment, Submitted: now}
	for _, r := range runs {
		sub.Runs = append(sub.Runs, r.ID)
	}
	return sub, nil
}

// write writes the submission's files: runs.txt, the scripts and the
// probe.
func (s *Submission) write(job *Job, o *Options) error {
	token := make([]byte, 8)
	rand.Read(token)
	files := []struct {
		name string
		data string
		mode os.FileMode
	}{
		{"runs.txt", strings.Join(s.Runs, "\n") + "\n", 0o644},
		{"job.sh", jobScript(job, s.Dir, o.Retries), 0o755},
		{"pretrain.sh", pretrainScript(job), 0o755},
		{probeFile, hex.EncodeToString(token) + "\n", 0o644},
	}
	for _, f := range files {
		p := filepath.Join(s.Dir, f.name)
		if err := results.WriteFile(p, []byte(f.data)); err != nil {
			return fmt.Errorf("slurm: %w", err)
		}
		if err := os.Chmod(p, f.mode); err != nil {
			return fmt.Errorf("slurm: %w", err)
		}
	}
	return nil
}

// probeWait is how long the probe waits for a free node.
const probeWait = 30

// probe checks that a compute node sees the probe file of the submission
// folder dir. A cluster with no node free for probeWait seconds is not
// probed: the tasks check for the file themselves.
func probe(ctx context.Context, dir string, o *Options) error {
	p := filepath.Join(dir, probeFile)
	args := []string{fmt.Sprintf("--immediate=%d", probeWait), "--quiet", "--nodes=1", "--ntasks=1", "--time=1"}
	if o.Partition != "" {
		args = append(args, "--partition="+o.Partition)
	}
	args = append(args, "/bin/sh", "-c", "if test -f "+quote(p)+"; then echo repro-probe-seen; else echo repro-probe-missing $(hostname); fi")
	out, err := command(ctx, "srun", args...)
	switch {
	case strings.Contains(out, "repro-probe-seen"):
		return nil
	case strings.Contains(out, "repro-probe-missing"):
		host := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(out), "repro-probe-missing"))
		return fmt.Errorf("slurm: compute node %s does not see the results folder %s: it must be on a filesystem that the submitting machine and every compute node share (--results)", host, filepath.Dir(filepath.Dir(filepath.Dir(dir))))
	case ctx.Err() != nil:
		return ctx.Err()
	}
	o.logf("slurm: warning: could not check that the compute nodes see %s (%v); each task checks it when it starts\n", dir, err)
	return nil
}

// sbatch submits a job and returns its id.
func sbatch(ctx context.Context, args []string) (string, error) {
	out, err := command(ctx, "sbatch", args...)
	if err != nil {
		return "", err
	}
	// --parsable prints "id" or "id;cluster".
	id, _, _ := strings.Cut(strings.TrimSpace(out), ";")
	if _, err := strconv.ParseUint(id, 10, 64); err != nil {
		return "", fmt.Errorf("slurm: sbatch printed %q, not a job id", strings.TrimSpace(out))
	}
	return id, nil
}

// cancel cancels the jobs ids (scancel), ignoring errors: a job that has
// ended cannot be cancelled.
func cancel(ctx context.Context, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	_, err := command(ctx, "scancel", ids...)
	return err
}

// A Task is one line of squeue: a job, or an array's task or range of
// tasks, with its state and the reason it waits.
type Task struct {
	ID, State, Reason string
}

// Queue returns the tasks of the jobs ids that are still in the queue
// (pending, running, completing ...), from squeue.
func Queue(ctx context.Context, ids []string) ([]Task, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	out, err := command(ctx, "squeue", "--noheader", "--array", "--jobs="+strings.Join(ids, ","), "--format=%i|%T|%r")
	if err != nil {
		// squeue fails on a list of jobs that have all left the queue.
		if strings.Contains(err.Error(), "Invalid job id") {
			return nil, nil
		}
		return nil, err
	}
	var tasks []Task
	for line := range strings.SplitSeq(strings.TrimSpace(out), "\n") {
		f := strings.SplitN(strings.TrimSpace(line), "|", 3)
		if len(f) == 3 {
			tasks = append(tasks, Task{ID: f[0], State: f[1], Reason: f[2]})
		}
	}
	return tasks, nil
}

// Wait follows the submission sub of runs until its jobs have left the
// queue, reporting the runs that start and end on t. When ctx is done it
// cancels the submission's jobs and returns ctx's error. A pretraining job
// that fails leaves the tasks unrunnable: they are cancelled and Wait
// returns an error naming the job's output.
func Wait(ctx context.Context, sub *Submission, runs []*runners.Run, t *runners.Tracker, o *Options) error {
	if o == nil {
		o = &Options{}
	}
	poll := o.Poll
	if poll <= 0 {
		poll = 2 * time.Second
	}
	// squeue may fail for a while (slurmctld restarting): Wait gives up
	// after maxQueueErrors failures in a row.
	const maxQueueErrors = 30
	queueErrors := 0
	for {
		t.Poll(runs)
		q, err := Queue(context.WithoutCancel(ctx), sub.Jobs())
		if err != nil {
			if queueErrors++; queueErrors >= maxQueueErrors {
				return fmt.Errorf("%w (the jobs %s may still be running: repro status, repro cancel)", err, strings.Join(sub.Jobs(), ", "))
			}
			q = []Task{{}} // unknown: look again
		} else {
			queueErrors = 0
		}
		if len(q) == 0 {
			break
		}
		for _, task := range q {
			if task.Reason == "DependencyNeverSatisfied" {
				cancel(context.WithoutCancel(ctx), sub.Jobs())
				return fmt.Errorf("slurm: the pretraining job %s failed; see %s", sub.Pretrain, filepath.Join(sub.Dir, "pretrain-"+sub.Pretrain+".out"))
			}
		}
		select {
		case <-ctx.Done():
			err := cancel(context.WithoutCancel(ctx), sub.Jobs())
			o.logf("%s: cancelled jobs %s\n", sub.Experiment, strings.Join(sub.Jobs(), ", "))
			return errors.Join(ctx.Err(), err)
		case <-time.After(poll):
		}
	}
	if t.Poll(runs) < len(runs) {
		for _, r := range runs {
			t.Gone(r)
		}
		if sub.Pretrain != "" && !tasksStarted(sub) {
			return fmt.Errorf("slurm: the pretraining job %s ended (failed or cancelled) before any task started; see %s", sub.Pretrain, filepath.Join(sub.Dir, "pretrain-"+sub.Pretrain+".out"))
		}
	}
	return nil
}

// tasksStarted reports whether a task of sub started, which they do only
// after the pretraining job succeeded: some task wrote its output.
func tasksStarted(sub *Submission) bool {
	outs, _ := filepath.Glob(filepath.Join(sub.Dir, "task-*.out"))
	return len(outs) > 0
}

// Submissions returns the submissions of experiment exp under root, oldest
// first.
func Submissions(root, exp string) ([]*Submission, error) {
	names, err := filepath.Glob(filepath.Join(submissionsDir(root, exp), "*", "submission.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var subs []*Submission
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, fmt.Errorf("slurm: %w", err)
		}
		s := &Submission{Dir: filepath.Dir(n)}
		if err := json.Unmarshal(b, s); err != nil {
			return nil, fmt.Errorf("slurm: %s: %w", n, err)
		}
		subs = append(subs, s)
	}
	return subs, nil
}

// Cancel cancels every job of the submissions of experiment exp under root
// that is still in the queue, and returns their ids.
func Cancel(ctx context.Context, root, exp string) ([]string, error) {
	subs, err := Submissions(root, exp)
	if err != nil || len(subs) == 0 {
		return nil, err
	}
	if err := Available(); err != nil {
		return nil, err
	}
	var ids []string
	for _, s := range subs {
		ids = append(ids, s.Jobs()...)
	}
	q, err := Queue(ctx, ids)
	if err != nil {
		return nil, err
	}
	var live []string
	for _, task := range q {
		job, _, _ := strings.Cut(task.ID, "_")
		if !slices.Contains(live, job) {
			live = append(live, job)
		}
	}
	return live, cancel(ctx, live)
}

// A Backend executes a sweep's runs on Slurm: [Submit], then [Wait]. It
// is the runners.Remote of repro run --executor slurm --wait.
type Backend struct {
	Job     Job
	Options Options
	// Submission is the last submission made, nil if none.
	Submission *Submission
}

var _ runners.Remote = (*Backend)(nil)

// Submit implements runners.Remote. Runs whose lock another process holds
// (a task of an earlier submission is executing them) are not submitted
// again, but are followed like the others.
func (b *Backend) Submit(ctx context.Context, runs []*runners.Run, t *runners.Tracker) error {
	var todo []*runners.Run
	busy := 0
	for _, r := range runs {
		if st, _ := runners.State(r.Dir); st == string(results.Running) {
			busy++
			continue
		}
		todo = append(todo, r)
	}
	if busy > 0 {
		b.Options.logf("%s: %d runs are being executed by an earlier submission; not submitting them again\n", b.Job.Experiment, busy)
	}
	sub, err := Submit(ctx, &b.Job, &b.Options, todo)
	if err != nil || sub == nil {
		return err
	}
	b.Submission = sub
	b.Options.logf("%s: following it; Ctrl-C cancels it (repro status %s shows it, repro cancel %s cancels it)\n", b.Job.Experiment, b.Job.Spec, b.Job.Spec)
	return Wait(ctx, sub, todo, t, &b.Options)
}

// Dispatch implements runners.Backend: it submits runs and waits for them,
// without reporting progress; exec is not called.
func (b *Backend) Dispatch(ctx context.Context, runs []*runners.Run, exec func(*runners.Run)) error {
	return b.Submit(ctx, runs, runners.NewTracker(time.Now()))
}
