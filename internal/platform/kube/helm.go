package kube

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/cli"
	"helm.sh/helm/v3/pkg/registry"
	"helm.sh/helm/v3/pkg/storage/driver"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
)

// Labels on Helm releases meshbench installed: the release's storage
// Secret carries managedBy and the install order; every object a chart
// renders carries labelRelease, so that leftovers can be found by label.
const (
	labelOrder   = "meshbench.io/order"
	labelRelease = "meshbench.io/release"
)

// helmRelease is one chart meshbench installs.
type helmRelease struct {
	Chart     string // key into the resolved charts
	Name      string
	Namespace string
	Values    map[string]any
}

// helmConfig returns a Helm action configuration for a namespace, logging
// Helm's debug output at debug level.
func (p *kubePlatform) helmConfig(namespace string) (*action.Configuration, error) {
	cfg := new(action.Configuration)
	logf := func(format string, v ...any) { p.log.Debug("helm: " + fmt.Sprintf(format, v...)) }
	if err := cfg.Init(p.c, namespace, "secret", logf); err != nil {
		return nil, fmt.Errorf("helm: %w", err)
	}
	return cfg, nil
}

func (p *kubePlatform) helmSettings() *cli.EnvSettings {
	s := cli.New()
	if p.opts.HelmRepositoryConfig != "" {
		s.RepositoryConfig = p.opts.HelmRepositoryConfig
	}
	if p.opts.HelmRepositoryCache != "" {
		s.RepositoryCache = p.opts.HelmRepositoryCache
	}
	return s
}

// installRelease installs one chart and waits for its workloads to be
// ready. order records the install sequence, so that removal runs in
// reverse. It returns what it installed.
func (p *kubePlatform) installRelease(ctx context.Context, r helmRelease, order int) (installedChart, error) {
	ch, err := p.loadChart(r.Chart)
	if err != nil {
		return installedChart{}, err
	}
	cfg, err := p.helmConfig(r.Namespace)
	if err != nil {
		return installedChart{}, err
	}
	in := action.NewInstall(cfg)
	in.ReleaseName, in.Namespace = r.Name, r.Namespace
	// Helm only creates the objects; meshbench waits for them itself,
	// under ctx. Helm's own wait goes on in the background after its
	// context ends, and could create objects after a rollback removed
	// the release.
	in.Timeout = p.opts.Timeout
	in.Labels = map[string]string{labelManagedBy: managedBy, labelRun: p.opts.RunID, labelOrder: strconv.Itoa(order)}
	in.PostRenderer = labelRenderer{release: r.Name, run: p.opts.RunID}
	values := p.releaseValues(r)
	// Recorded before Helm writes anything, so that what a run killed
	// mid-install left is still its to remove.
	rec := installedRelease{Name: r.Name, Namespace: r.Namespace, Run: p.opts.RunID, Order: order}
	if err := p.record(ctx, rec); err != nil {
		return installedChart{}, err
	}
	p.log.Info("installing chart", "release", r.Name, "chart", ch.Metadata.Name, "version", ch.Metadata.Version, "namespace", r.Namespace)
	rel, err := in.RunWithContext(context.WithoutCancel(ctx), ch, values)
	if rel != nil {
		rec.Manifest = manifestDigest(rel)
		if rerr := p.record(context.WithoutCancel(ctx), rec); rerr != nil && err == nil {
			err = rerr
		}
	}
	if err != nil {
		return installedChart{}, fmt.Errorf("install %s (chart %s %s): %w", r.Name, ch.Metadata.Name, ch.Metadata.Version, err)
	}
	if err := p.waitRollouts(ctx, []string{r.Namespace}, labelRelease+"="+r.Name); err != nil {
		return installedChart{}, fmt.Errorf("install %s (chart %s %s): %w", r.Name, ch.Metadata.Name, ch.Metadata.Version, err)
	}
	return installedChart{Release: r.Name, Chart: ch.Metadata.Name, Version: ch.Metadata.Version, Source: p.charts[r.Chart].Chart, Values: values}, nil
}

// releaseValues are the values a release installs with: meshbench's, with
// the study's for its chart merged over them.
func (p *kubePlatform) releaseValues(r helmRelease) map[string]any {
	return mergeValues(r.Values, p.charts[r.Chart].Values)
}

// loadChart finds the chart a key names, as the resolved charts give its
// source (a repository, an OCI reference, a path, or "repo/chart" from the
// user's Helm repositories), and loads it.
func (p *kubePlatform) loadChart(key string) (*chart.Chart, error) {
	src := p.charts[key]
	// An Install action only locates here: it holds the chart path
	// options and the registry client for OCI references.
	in := action.NewInstall(new(action.Configuration))
	in.RepoURL, in.Version = src.Repo, src.Version
	if registry.IsOCI(src.Chart) {
		rc, err := registry.NewClient()
		if err != nil {
			return nil, fmt.Errorf("chart %s: registry client: %w", key, err)
		}
		in.SetRegistryClient(rc)
	}
	path, err := in.LocateChart(src.Chart, p.helmSettings())
	if err != nil {
		var hint string
		switch repo, _, ok := strings.Cut(src.Chart, "/"); {
		case ok && src.Repo == "" && !registry.IsOCI(src.Chart) && !strings.HasPrefix(src.Chart, ".") && !strings.HasPrefix(src.Chart, "/"):
			hint = fmt.Sprintf(" (is the Helm repository %q added? e.g. helm repo add %s URL && helm repo update)", repo, repo)
		case src.Repo != "":
			hint = fmt.Sprintf(" (is %s reachable from here? else name a local copy, from helm pull --untar, in platform.kubernetes.charts.%s.chart)", src.Repo, key)
		}
		return nil, fmt.Errorf("chart %s (%s %s): %w%s", key, src.Chart, src.Version, err, hint)
	}
	ch, err := loader.Load(path)
	if err != nil {
		return nil, fmt.Errorf("chart %s: load %s: %w", key, path, err)
	}
	return ch, nil
}

// removeReleases uninstalls the Helm releases a run recorded ("" every
// run's), newest first, each with the CRDs it kept.
func (p *kubePlatform) removeReleases(ctx context.Context, run string) error {
	rels, err := p.installedReleases(ctx, run)
	if err != nil {
		return err
	}
	for i := len(rels) - 1; i >= 0; i-- {
		if err := p.uninstallRelease(ctx, rels[i]); err != nil {
			return err
		}
		if err := p.deleteKeptCRDs(ctx, rels[i].Run, rels[i].Name); err != nil {
			return err
		}
	}
	return nil
}

// uninstallRelease removes a recorded release, once checkRelease found it
// the run's, and waits for its objects to go, within ctx's deadline:
// Helm's uninstall takes no context, only a timeout, so it gets the time
// left. It runs none of the release's hooks: a hook is a manifest Helm
// would create with meshbench's credentials, and the charts meshbench
// installs need none on delete. The record then forgets it.
func (p *kubePlatform) uninstallRelease(ctx context.Context, r installedRelease) error {
	timeout, err := helmTimeout(ctx, p.opts.Timeout)
	if err != nil {
		return fmt.Errorf("uninstall %s/%s: %w", r.Namespace, r.Name, err)
	}
	cfg, err := p.helmConfig(r.Namespace)
	if err != nil {
		return err
	}
	rel, err := cfg.Releases.Last(r.Name)
	if errors.Is(err, driver.ErrReleaseNotFound) {
		return p.unrecord(ctx, r) // Helm never wrote it, or it is gone
	}
	if err != nil {
		return fmt.Errorf("uninstall %s/%s: %w", r.Namespace, r.Name, err)
	}
	if err := p.checkRelease(ctx, r, rel); err != nil {
		return fmt.Errorf("refusing to uninstall %s/%s: %w; remove it yourself if it is meshbench's", r.Namespace, r.Name, err)
	}
	un := action.NewUninstall(cfg)
	un.Wait, un.Timeout, un.IgnoreNotFound, un.DisableHooks = true, timeout, true, true
	p.log.Info("uninstalling chart", "release", r.Name, "namespace", r.Namespace)
	if _, err := un.Run(r.Name); err != nil && !strings.Contains(err.Error(), driver.ErrReleaseNotFound.Error()) {
		return fmt.Errorf("uninstall %s/%s: %w", r.Namespace, r.Name, err)
	}
	return p.unrecord(ctx, r)
}

// crdSelector selects the CRDs a run's release kept; "" for either is
// any. Charts label their objects managed-by Helm, so the run label alone
// says they are meshbench's.
func crdSelector(run, release string) string {
	sel := labelRun
	if run != "" {
		sel += "=" + run
	}
	sel += "," + labelRelease
	if release != "" {
		sel += "=" + release
	}
	return sel
}

// helmTimeout is the timeout of a Helm action that takes no context: the
// platform's, cut to the time left before ctx's deadline; an error when
// ctx is done.
func helmTimeout(ctx context.Context, timeout time.Duration) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if d, ok := ctx.Deadline(); ok {
		left := time.Until(d)
		if left <= 0 {
			return 0, context.DeadlineExceeded
		}
		timeout = min(timeout, left)
	}
	return timeout, nil
}

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// deleteKeptCRDs deletes the CRDs a release installed that Helm kept on
// uninstall (Istio marks its CRDs helm.sh/resource-policy: keep), found by
// the run and release labels meshbench rendered onto them, and waits until
// they are gone. The release created them, so they were not there before.
func (p *kubePlatform) deleteKeptCRDs(ctx context.Context, run, release string) error {
	ri := p.c.dyn.Resource(crdGVR)
	sel := metav1.ListOptions{LabelSelector: crdSelector(run, release)}
	list, err := ri.List(ctx, sel)
	if err != nil {
		return fmt.Errorf("list CRDs of %s: %w", release, err)
	}
	if len(list.Items) == 0 {
		return nil
	}
	p.log.Info("deleting CRDs the chart kept", "release", release, "crds", len(list.Items))
	for _, crd := range list.Items {
		if err := ri.Delete(ctx, crd.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete CRD %s: %w", crd.GetName(), err)
		}
	}
	rq := &crdRequeuer{ri: ri, log: p.log, last: map[string]time.Time{}}
	return wait.PollUntilContextTimeout(ctx, pollInterval, p.opts.Timeout, true, func(ctx context.Context) (bool, error) {
		left, err := ri.List(ctx, sel)
		if err != nil {
			return false, pollErr(ctx, err)
		}
		if err := rq.requeueFailed(ctx, left.Items); err != nil {
			return false, pollErr(ctx, err)
		}
		return len(left.Items) == 0, nil
	})
}
