package report

import (
	"bytes"
	"testing"
)

func TestMarkdownGolden(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteMarkdown(&buf, Build(loadFixture(t))); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.md.golden", buf.Bytes())
}

func TestSMPGolden(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := WriteSMP(&buf, loadFixture(t)); err != nil {
		t.Fatal(err)
	}
	golden(t, "smp.json.golden", buf.Bytes())
}

func TestReportIsReproducible(t *testing.T) {
	t.Parallel()
	render := func() []byte {
		var buf bytes.Buffer
		if err := WriteHTML(&buf, Build(loadFixture(t))); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	if a, b := render(), render(); !bytes.Equal(a, b) {
		t.Error("the same results gave two different HTML reports")
	}
}
