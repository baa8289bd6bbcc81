package kube

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	helmrelease "helm.sh/helm/v3/pkg/release"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"
)

// A run's record says which Helm releases are the run's. Uninstalling a
// release deletes every object its stored manifest names, in any
// namespace, with meshbench's credentials, so a release counts as a run's
// only when the run recorded it: in a Secret meshbench writes in the
// lease's namespace, which it made and no tenant may write in. Labels on
// Helm's storage Secrets prove nothing: whoever may write a Secret in any
// namespace may write them.
const (
	componentRecord = "record"
	recordType      = corev1.SecretType("meshbench.io/run-record")
	recordKey       = "releases.json"
)

// recordName is the Secret holding a run's record.
func recordName(run string) string { return "meshbench-run-" + run }

// installedRelease is a release a run recorded.
type installedRelease struct {
	Name, Namespace string
	Run             string `json:"-"`
	Order           int
	// Manifest is the SHA-256 of the release's manifest and hooks as Helm
	// stored them, recorded once the install returned; "" before.
	Manifest string `json:",omitempty"`
}

// installedReleases lists the Helm releases a run recorded ("" every
// run's), in install order, from the cluster rather than memory, so that
// what a crashed run left can be removed.
func (p *kubePlatform) installedReleases(ctx context.Context, run string) ([]installedRelease, error) {
	if there, err := p.lockNamespaceExists(ctx); err != nil || !there {
		return nil, err
	}
	list, err := p.c.kube.CoreV1().Secrets(lockNamespace).List(ctx, metav1.ListOptions{LabelSelector: runSelector(run) + "," + labelComponent + "=" + componentRecord})
	if err != nil {
		return nil, fmt.Errorf("list the runs' records in %s: %w", lockNamespace, err)
	}
	var out []installedRelease
	for _, s := range list.Items {
		if s.Type != recordType || s.Name != recordName(s.Labels[labelRun]) {
			continue
		}
		rels, err := decodeRecord(s)
		if err != nil {
			return nil, err
		}
		out = append(out, rels...)
	}
	slices.SortFunc(out, func(a, b installedRelease) int {
		if c := strings.Compare(a.Run, b.Run); c != 0 {
			return c
		}
		return a.Order - b.Order
	})
	return out, nil
}

func decodeRecord(s corev1.Secret) ([]installedRelease, error) {
	var rels []installedRelease
	if err := json.Unmarshal(s.Data[recordKey], &rels); err != nil {
		return nil, fmt.Errorf("the record %s/%s: %w", s.Namespace, s.Name, err)
	}
	for i := range rels {
		rels[i].Run = s.Labels[labelRun]
	}
	return rels, nil
}

// record adds or replaces one release in this run's record, creating it
// on first use.
func (p *kubePlatform) record(ctx context.Context, r installedRelease) error {
	return p.editRecord(ctx, p.opts.RunID, func(rels []installedRelease) []installedRelease {
		rels = slices.DeleteFunc(rels, func(x installedRelease) bool { return x.Namespace == r.Namespace && x.Name == r.Name })
		return append(rels, r)
	})
}

// unrecord drops a release from its run's record, and the record when it
// lists none.
func (p *kubePlatform) unrecord(ctx context.Context, r installedRelease) error {
	return p.editRecord(ctx, r.Run, func(rels []installedRelease) []installedRelease {
		return slices.DeleteFunc(rels, func(x installedRelease) bool { return x.Namespace == r.Namespace && x.Name == r.Name })
	})
}

func (p *kubePlatform) editRecord(ctx context.Context, run string, edit func([]installedRelease) []installedRelease) error {
	secrets := p.c.kube.CoreV1().Secrets(lockNamespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := secrets.Get(ctx, recordName(run), metav1.GetOptions{})
		var rels []installedRelease
		switch {
		case apierrors.IsNotFound(err):
			s = &corev1.Secret{ObjectMeta: objMeta(lockNamespace, recordName(run), map[string]string{labelRun: run, labelComponent: componentRecord}), Type: recordType}
		case err != nil:
			return err
		default:
			if rels, err = decodeRecord(*s); err != nil {
				return err
			}
		}
		rels = edit(rels)
		if len(rels) == 0 {
			if s.UID == "" {
				return nil
			}
			return secrets.Delete(ctx, s.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &s.ResourceVersion}})
		}
		data, err := json.Marshal(rels)
		if err != nil {
			return err
		}
		s.Data = map[string][]byte{recordKey: data}
		if s.UID == "" {
			_, err = secrets.Create(ctx, s, metav1.CreateOptions{FieldManager: fieldManager})
			return err
		}
		_, err = secrets.Update(ctx, s, metav1.UpdateOptions{FieldManager: fieldManager})
		return err
	})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("the record of run %s in %s: %w", run, lockNamespace, err)
	}
	return nil
}

// manifestDigest is the SHA-256 of what uninstalling a release would act
// on: its manifest and its hooks.
func manifestDigest(rel *helmrelease.Release) string {
	h := sha256.New()
	h.Write([]byte(rel.Manifest))
	for _, hk := range rel.Hooks {
		h.Write([]byte("\n---\n" + hk.Manifest))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// checkRelease says why a recorded release must not be uninstalled, or
// nil: Helm's stored release must be the run's, as the run recorded it
// (the digest of its manifest), and every object its manifest names that
// exists must carry the run's label, which meshbench renders onto every
// object of its releases. Helm then deletes only what the run made.
func (p *kubePlatform) checkRelease(ctx context.Context, r installedRelease, rel *helmrelease.Release) error {
	if rel.Labels[labelRun] != r.Run {
		return fmt.Errorf("the stored release %s/%s is not run %s's (its labels say run %q)", r.Namespace, r.Name, r.Run, rel.Labels[labelRun])
	}
	if r.Manifest != "" && manifestDigest(rel) != r.Manifest {
		return fmt.Errorf("the stored release %s/%s differs from what run %s installed (its manifest changed since)", r.Namespace, r.Name, r.Run)
	}
	for _, doc := range splitYAML(rel.Manifest) {
		var o unstructured.Unstructured
		if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
			return fmt.Errorf("the stored release %s/%s: %w", r.Namespace, r.Name, err)
		}
		if len(o.Object) == 0 {
			continue
		}
		gvk := schema.FromAPIVersionAndKind(o.GetAPIVersion(), o.GetKind())
		ns := o.GetNamespace()
		if ns == "" {
			ns = r.Namespace
		}
		ri, err := p.c.resourceFor(gvk, ns)
		if meta.IsNoMatchError(err) {
			continue // a kind the cluster no longer serves: nothing of it is left
		}
		if err != nil {
			return fmt.Errorf("the stored release %s/%s names %s: %w", r.Namespace, r.Name, describe(&o), err)
		}
		cur, err := ri.Get(ctx, o.GetName(), metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("the stored release %s/%s names %s: %w", r.Namespace, r.Name, describe(&o), err)
		}
		if cur.GetLabels()[labelRun] != r.Run {
			return fmt.Errorf("the stored release %s/%s names %s, which run %s did not make", r.Namespace, r.Name, describe(cur), r.Run)
		}
	}
	return nil
}
