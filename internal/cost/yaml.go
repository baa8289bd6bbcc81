package cost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

// readYAML decodes the YAML file at path into v, refusing unknown fields.
func readYAML(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read %s: %w", path, err)
	}
	if err := decodeYAML(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// decodeYAML decodes YAML (or JSON) into v, refusing unknown fields.
func decodeYAML(data []byte, v any) error {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		return err
	}
	return strictJSON(j, v)
}

// strictJSON decodes JSON into v, refusing unknown fields.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
