package istiod

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	yamlutil "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

var gvrCRD = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// InstallCRDs creates the CustomResourceDefinitions in a YAML stream
// (other kinds in it are passed over) and waits up to a minute until each
// of served can be listed.
func InstallCRDs(ctx context.Context, dyn dynamic.Interface, path string, served ...schema.GroupVersionResource) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	dec := yamlutil.NewYAMLOrJSONDecoder(bytes.NewReader(b), 64<<10)
	for {
		var obj map[string]any
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return fmt.Errorf("%s: %w", path, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		if obj == nil || u.GetKind() != "CustomResourceDefinition" {
			continue
		}
		if _, err := dyn.Resource(gvrCRD).Create(ctx, u, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create CRD %s: %w", u.GetName(), err)
		}
	}
	wctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var last error
	err = wait.PollUntilContextCancel(wctx, 300*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		for _, g := range served {
			if _, last = dyn.Resource(g).List(ctx, metav1.ListOptions{Limit: 1}); last != nil {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("CRDs from %s not served: %w (last: %v)", path, err, last)
	}
	return nil
}
