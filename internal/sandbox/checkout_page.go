package sandbox

import (
	"html/template"
	"net/http"
)

// checkoutPageRoutes serve the hosted checkout page a payer is sent to. This
// is the page's minimal form: it names the payment; paying happens through
// POST /sandbox/payments/{reference}/complete.
func checkoutPageRoutes(s *Server) []route {
	return []route{
		{pattern: "GET /checkout/{reference}", auth: authPublic, handler: s.checkoutPage},
	}
}

var checkoutPageTemplate = template.Must(template.New("checkout").Parse(`<!DOCTYPE html>
<html lang="en">
<head><meta charset="utf-8"><title>{{if .Found}}Pay {{.Amount}}{{else}}Checkout not found{{end}}</title></head>
<body>
{{- if .Found}}
<h1>Pay {{.Amount}}</h1>
{{- with .Description}}
<p class="description">{{.}}</p>
{{- end}}
<p class="status">Status: {{.Status}}</p>
<p class="reference">Reference: {{.Reference}}</p>
{{- else}}
<h1>Checkout not found</h1>
<p>No checkout session has the reference {{.Reference}}.</p>
{{- end}}
</body>
</html>
`))

type checkoutPageData struct {
	Found                                  bool
	Reference, Amount, Description, Status string
}

func (s *Server) checkoutPage(w http.ResponseWriter, r *http.Request) {
	data := checkoutPageData{Reference: r.PathValue("reference")}
	s.mu.Lock()
	if p, ok := s.payments.checkouts.get(data.Reference); ok {
		data.Found, data.Status = true, p.Status
		data.Amount = p.Currency + " " + decimal(p.Amount).String()
		if p.Description != nil {
			data.Description = *p.Description
		}
	}
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if !data.Found {
		w.WriteHeader(http.StatusNotFound)
	}
	_ = checkoutPageTemplate.Execute(w, data)
}
