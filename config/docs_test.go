package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The examples in docs/config.md must load.
func TestDocsExamplesLoad(t *testing.T) {
	b, err := os.ReadFile("../docs/config.md")
	require.NoError(t, err)
	blocks := map[string]string{}
	for _, part := range strings.Split(string(b), "```")[1:] {
		lang, body, _ := strings.Cut(part, "\n")
		if (lang == "yaml" || lang == "json") && blocks[lang] == "" {
			blocks[lang] = body
		}
	}
	require.Len(t, blocks, 2)
	environ := []string{"DOCS_TOKEN=t", "HOME=/home/u"}
	for lang, body := range blocks {
		cfg, err := Load(writeFile(t, "example."+lang, body), environ)
		require.NoError(t, err, lang)
		require.Len(t, cfg.Servers, 2, lang)
	}
}
