package kube

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// toUnstructured converts typed objects for server-side apply, with their
// kind set and the empty fields the API server fills in removed, so that
// meshbench's field manager owns only what it means to set.
func toUnstructured(objs []runtime.Object) ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		kinds, _, err := scheme.Scheme.ObjectKinds(o)
		if err != nil {
			return nil, fmt.Errorf("object kind: %w", err)
		}
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			return nil, fmt.Errorf("convert %s: %w", kinds[0].Kind, err)
		}
		u := &unstructured.Unstructured{Object: m}
		u.SetGroupVersionKind(kinds[0])
		unstructured.RemoveNestedField(u.Object, "status")
		unstructured.RemoveNestedField(u.Object, "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "spec", "template", "metadata", "creationTimestamp")
		unstructured.RemoveNestedField(u.Object, "spec", "strategy")
		out = append(out, u)
	}
	return out, nil
}

// fromYAML reads one object written as YAML.
func fromYAML(doc string) (*unstructured.Unstructured, error) {
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		return nil, fmt.Errorf("parse manifest: %w", err)
	}
	return u, nil
}

// manifestYAML writes objects as one multi-document YAML stream, the form
// of the golden files and of `meshbench` dry runs.
func manifestYAML(objs []*unstructured.Unstructured) ([]byte, error) {
	var out []byte
	for i, o := range objs {
		b, err := yaml.Marshal(o.Object)
		if err != nil {
			return nil, fmt.Errorf("marshal %s: %w", describe(o), err)
		}
		if i > 0 {
			out = append(out, "---\n"...)
		}
		out = append(out, b...)
	}
	return out, nil
}
