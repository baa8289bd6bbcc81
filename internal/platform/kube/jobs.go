package kube

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/meshbench/meshbench/internal/load"
	"github.com/meshbench/meshbench/internal/results/confined"
)

// jobContainer is the container of every load and probe Job. Its own
// termination, not the Job's, says the run is over: a sidecar keeps the pod
// running after the generator has finished.
const jobContainer = "meshbench"

// controlContainer is a probe pod's second generator, the positive
// control: it calls over the mesh beside the probe, from the same pod.
const controlContainer = "control"

// jobSpec is one run of `meshbench load` as a Job.
type jobSpec struct {
	Namespace      string
	Name           string
	Component      string // componentLoad or componentProbe
	ServiceAccount string
	// Load is what the generator runs; its body travels in a ConfigMap
	// of the Job's name (bodyConfigMap).
	Load      load.Options
	Place     placement
	Deadline  time.Duration
	Resources corev1.ResourceRequirements
	// LogDir, when set, receives the generator's log as
	// <namespace>-<name>.log.
	LogDir confined.Dir
	// Control, when set, is run by a second container of the same pod
	// (controlContainer), sharing its network, identity and node.
	Control *load.Options
	// UID, when set, is the generator container's user in place of the
	// image's: a sidecar's own UID, whose traffic the pod's redirect lets
	// out past the proxy, in plaintext.
	UID int64
	// Labels are the pod's labels beyond meshbench's own: a probe's
	// opt-out from an ambient namespace's enrollment.
	Labels map[string]string
	// Node, when set, is the one node the pod may run on, so that probes
	// judged side by side share it.
	Node string
}

// loadBodyDir is where a Job's generator finds its request body, mounted
// from the ConfigMap bodyConfigMap makes, as the file loadBodyKey.
const (
	loadBodyDir = "/etc/meshbench-load"
	loadBodyKey = "body"
)

// bodyConfigMap is the ConfigMap carrying a Job's request body, named as
// the Job, or nil when the load sends none. It travels as a file, as in
// the lab, because argv cannot carry every byte.
func bodyConfigMap(js jobSpec) *corev1.ConfigMap {
	if len(js.Load.Body) == 0 {
		return nil
	}
	return &corev1.ConfigMap{
		ObjectMeta: objMeta(js.Namespace, js.Name, map[string]string{labelComponent: js.Component}),
		BinaryData: map[string][]byte{loadBodyKey: js.Load.Body},
	}
}

// jobManifest is the Job running spec, with the annotations that make a
// sidecar start before the generator, so that the first requests do not
// fail for want of a proxy.
func jobManifest(js jobSpec, image string, pull corev1.PullPolicy) *batchv1.Job {
	labels := map[string]string{labelComponent: js.Component}
	podLabels := managedLabels(labels)
	for k, v := range js.Labels {
		podLabels[k] = v
	}
	c := corev1.Container{
		Name: jobContainer, Image: image, ImagePullPolicy: pull, Resources: js.Resources,
		Args: load.Args(js.Load, loadBodyDir+"/"+loadBodyKey), SecurityContext: containerSecurity(),
	}
	if js.UID != 0 {
		c.SecurityContext.RunAsUser = ptr(js.UID)
	}
	var volumes []corev1.Volume
	if cm := bodyConfigMap(js); cm != nil {
		volumes = []corev1.Volume{{Name: "load-body", VolumeSource: corev1.VolumeSource{
			ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}}}}}
		c.VolumeMounts = []corev1.VolumeMount{{Name: "load-body", MountPath: loadBodyDir, ReadOnly: true}}
	}
	containers := []corev1.Container{c}
	if js.Control != nil {
		// A control sends no body: it is a probe's GET.
		containers = append(containers, corev1.Container{
			Name: controlContainer, Image: image, ImagePullPolicy: pull,
			Args: load.Args(*js.Control, ""), SecurityContext: containerSecurity(),
		})
	}
	return &batchv1.Job{
		ObjectMeta: objMeta(js.Namespace, js.Name, labels),
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr(int32(0)),
			ActiveDeadlineSeconds: ptr(int64(js.Deadline / time.Second)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels: podLabels,
					Annotations: map[string]string{
						annotProxyConfig:  holdUntilProxyCfg,
						annotLinkerdAwait: "enabled",
					},
				},
				Spec: corev1.PodSpec{
					RestartPolicy:      corev1.RestartPolicyNever,
					SecurityContext:    podSecurity(nonRootUID),
					ServiceAccountName: js.ServiceAccount,
					NodeSelector:       js.Place.NodeSelector,
					Affinity:           onNode(js.Node),
					Tolerations:        js.Place.Tolerations,
					Containers:         containers,
					Volumes:            volumes,
				},
			},
		},
	}
}

// onNode is the affinity that keeps a pod to the named node, as a
// DaemonSet's pods are kept (by the node's name, not a label a cloud may
// set otherwise), or nil for any node.
func onNode(node string) *corev1.Affinity {
	if node == "" {
		return nil
	}
	return &corev1.Affinity{NodeAffinity: &corev1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchFields: []corev1.NodeSelectorRequirement{{Key: metav1.ObjectNameField, Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
		}}},
	}}
}

// jobResult is what one Job's generator reported.
type jobResult struct {
	Spec   jobSpec
	Pod    *corev1.Pod
	Result *load.Result
	// Control is the control container's result, when the spec has one.
	Control *load.Result
}

// runJobs runs Jobs side by side, waits for each generator container to
// end (within each spec's deadline), reads its result from the pod's log,
// and deletes the Jobs and their bodies whatever happened.
func (p *kubePlatform) runJobs(ctx context.Context, specs []jobSpec) ([]jobResult, error) {
	var objs []runtime.Object
	for _, js := range specs {
		// The body before its Job, whose pod mounts it.
		if cm := bodyConfigMap(js); cm != nil {
			objs = append(objs, cm)
		}
		objs = append(objs, jobManifest(js, p.opts.Image, corev1.PullPolicy(p.opts.ImagePullPolicy)))
	}
	jobs, err := toUnstructured(objs)
	if err != nil {
		return nil, err
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		defer cancel()
		if err := p.c.remove(dctx, jobs); err != nil {
			p.log.Warn("deleting jobs", "err", err)
		}
	}()
	if err := p.apply(ctx, jobs); err != nil {
		return nil, err
	}
	out := make([]jobResult, len(specs))
	g, gctx := errgroup.WithContext(ctx)
	for i, js := range specs {
		g.Go(func() error {
			r, err := p.awaitJob(gctx, js)
			out[i] = r
			return err
		})
	}
	return out, g.Wait()
}

// awaitJob waits for a Job's generator containers to end and parses
// their results from their logs.
func (p *kubePlatform) awaitJob(ctx context.Context, js jobSpec) (jobResult, error) {
	res := jobResult{Spec: js}
	what := fmt.Sprintf("%s %s/%s", js.Component, js.Namespace, js.Name)
	// Select the pods by the Job's UID, not its name: an earlier Job of
	// the same name may still have pods being collected.
	job, err := p.c.kube.BatchV1().Jobs(js.Namespace).Get(ctx, js.Name, metav1.GetOptions{})
	if err != nil {
		return res, fmt.Errorf("%s: %w", what, err)
	}
	pods := p.c.kube.CoreV1().Pods(js.Namespace)
	var state string
	var pod *corev1.Pod
	err = wait.PollUntilContextTimeout(ctx, pollInterval, js.Deadline, true, func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: batchv1.ControllerUidLabel + "=" + string(job.UID)})
		if err != nil {
			return false, pollErr(ctx, err)
		}
		if len(list.Items) == 0 {
			state = "no pod yet"
			return false, nil
		}
		pod = &list.Items[0]
		done, why := generatorsDone(pod, js)
		state = why
		if !done && strings.HasPrefix(why, "cannot start") {
			return false, errors.New(why)
		}
		return done, nil
	})
	if err != nil {
		if ctx.Err() == nil && wait.Interrupted(err) {
			return res, fmt.Errorf("%s did not finish within %s (%s)", what, js.Deadline, state)
		}
		return res, fmt.Errorf("%s: %w", what, err)
	}
	res.Pod = pod
	if res.Result, err = p.readResult(ctx, js, pod, jobContainer, state); err != nil {
		return res, err
	}
	if js.Control != nil {
		if res.Control, err = p.readResult(ctx, js, pod, controlContainer, state); err != nil {
			return res, err
		}
	}
	return res, nil
}

// readResult reads the result a generator container of a Job's pod wrote
// to its log.
func (p *kubePlatform) readResult(ctx context.Context, js jobSpec, pod *corev1.Pod, container, state string) (*load.Result, error) {
	what := fmt.Sprintf("%s %s/%s", js.Component, js.Namespace, js.Name)
	if container != jobContainer {
		what += " (container " + container + ")"
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	// The API server stops at LimitBytes; the reader refuses a log that
	// went past it all the same.
	limit := int64(maxJobLog + 1)
	logs, err := readStream(lctx, p.c.kube.CoreV1().Pods(js.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, LimitBytes: &limit}),
		maxJobLog, "the log of pod "+pod.Name)
	if err != nil {
		return nil, fmt.Errorf("%s finished (%s) but its output cannot be read from pod %s's log: %w", what, state, pod.Name, err)
	}
	if !js.LogDir.IsZero() {
		name := js.Namespace + "-" + js.Name + ".log"
		if container != jobContainer {
			name = js.Namespace + "-" + js.Name + "-" + container + ".log"
		}
		if err := js.LogDir.WriteFile(name, logs); err != nil {
			return nil, fmt.Errorf("%s: keep its log: %w", what, err)
		}
	}
	r, err := parseResult(logs)
	if err != nil {
		return nil, fmt.Errorf("%s (pod %s, %s): %w; log tail: %s", what, pod.Name, state, err, tail(logs, 5))
	}
	return r, nil
}

// generatorsDone reports whether every generator container of a Job's
// pod has ended, with the state of the first that has not.
func generatorsDone(pod *corev1.Pod, js jobSpec) (bool, string) {
	done, why := containerDone(pod, jobContainer)
	if done && js.Control != nil {
		done, why = containerDone(pod, controlContainer)
	}
	return done, why
}

// containerDone reports whether a generator container has ended, and a
// description of its state for messages. A container that cannot start
// (bad image, bad config) is reported at once as "cannot start: ...".
func containerDone(pod *corev1.Pod, container string) (bool, string) {
	for _, cs := range pod.Status.ContainerStatuses {
		if cs.Name != container {
			continue
		}
		if t := cs.State.Terminated; t != nil {
			return true, fmt.Sprintf("exit code %d, %s", t.ExitCode, t.Reason)
		}
		if w := cs.State.Waiting; w != nil {
			switch w.Reason {
			case "ErrImagePull", "ImagePullBackOff", "InvalidImageName", "CreateContainerConfigError", "CreateContainerError":
				return false, fmt.Sprintf("cannot start: %s: %s", w.Reason, w.Message)
			}
			return false, "waiting: " + w.Reason
		}
	}
	switch pod.Status.Phase {
	case corev1.PodSucceeded, corev1.PodFailed:
		return true, "pod " + strings.ToLower(string(pod.Status.Phase))
	}
	return false, "pod " + strings.ToLower(string(pod.Status.Phase))
}

// parseResult finds the JSON report `meshbench load --output json` wrote
// in a log that may also hold other lines.
func parseResult(logs []byte) (*load.Result, error) {
	if len(bytes.TrimSpace(logs)) == 0 {
		return nil, errors.New("the log is empty: the generator wrote no result")
	}
	var firstErr error
	for off := 0; off < len(logs); {
		if logs[off] == '{' {
			r, err := load.ReadResult(bytes.NewReader(logs[off:]))
			if err == nil {
				return r, nil
			}
			if firstErr == nil {
				firstErr = err
			}
		}
		nl := bytes.IndexByte(logs[off:], '\n')
		if nl < 0 {
			break
		}
		off += nl + 1
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return nil, errors.New("the log holds no JSON result")
}

func tail(b []byte, n int) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}
