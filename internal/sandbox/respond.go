package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Codes of the sandbox's error body. The spec fixes 4000 (validation) and
// 4101 (keys mismatch or scope disabled); it leaves the rest of the error body
// open ("Errors": shape not shown), so the other codes are the sandbox's own
// (DESIGN "The sandbox").
const (
	// CodeValidation answers a request that breaks a rule of the spec (HTTP 400).
	CodeValidation = "4000"
	// CodeKeysMismatch answers missing or wrong credentials (HTTP 401) and a
	// scope the credentials do not hold (HTTP 403).
	CodeKeysMismatch = "4101"
	// CodeNotFound answers an unknown id or an unknown route (HTTP 404).
	CodeNotFound = "not_found"
	// CodeMethodNotAllowed answers a known path called with another method (HTTP 405).
	CodeMethodNotAllowed = "method_not_allowed"
	// CodeConflict answers a duplicate of a value that must be unique (HTTP 409).
	CodeConflict = "conflict"
	// CodeIPNotAllowed answers a caller outside the allowlist on the
	// IP-restricted money-movement endpoints (HTTP 403).
	CodeIPNotAllowed = "ip_not_allowed"
	// CodeInternal answers a failure of the sandbox itself (HTTP 500).
	CodeInternal = "internal_error"
)

// apiError is a failure the sandbox answers with its error body.
type apiError struct {
	status  int
	code    string
	message string
	field   string // the request field at fault; validation errors only
}

func (e *apiError) Error() string { return e.message }

func validationError(field, format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: CodeValidation, message: fmt.Sprintf(format, args...), field: field}
}

// notFoundError names the kind of record and the id that matched nothing,
// e.g. "customer cust_123 not found".
func notFoundError(kind, id string) *apiError {
	return &apiError{status: http.StatusNotFound, code: CodeNotFound, message: kind + " " + strconv.Quote(id) + " not found"}
}

func conflictError(format string, args ...any) *apiError {
	return &apiError{status: http.StatusConflict, code: CodeConflict, message: fmt.Sprintf(format, args...)}
}

// errorBody is the sandbox's answer to every failure.
type errorBody struct {
	Success bool   `json:"success"`
	Message string `json:"message"`
	Code    string `json:"code"`
	Field   string `json:"field,omitempty"`
}

// dataBody is the success envelope of billing resources, checkout, receive
// and send (SPEC "Conventions"). The payment flows' other envelope families,
// {message, responseCode, data} and {ResponseCode, Data}, get their own body
// type and writer here when their resources arrive.
type dataBody struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

// writeJSON answers with body encoded as JSON.
func writeJSON(w http.ResponseWriter, status int, body any) {
	encoded, err := json.Marshal(body)
	if err != nil {
		status = http.StatusInternalServerError
		encoded, _ = json.Marshal(errorBody{Message: "encoding the response: " + err.Error(), Code: CodeInternal})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(encoded)+1))
	w.WriteHeader(status)
	_, _ = w.Write(append(encoded, '\n'))
}

// writeData answers {"success":true,"data":data}.
func writeData(w http.ResponseWriter, status int, data any) {
	writeJSON(w, status, dataBody{Success: true, Data: data})
}

// writeError answers the error body of err: its own status and code for an
// *apiError, 500 for anything else.
func writeError(w http.ResponseWriter, err error) {
	var e *apiError
	if !errors.As(err, &e) {
		e = &apiError{status: http.StatusInternalServerError, code: CodeInternal, message: "internal error: " + err.Error()}
	}
	writeJSON(w, e.status, errorBody{Message: e.message, Code: e.code, Field: e.field})
}

// writeResult answers the error body when err is not nil, else the success
// envelope of data with status: the last line of most handlers.
func writeResult(w http.ResponseWriter, status int, data any, err error) {
	if err != nil {
		writeError(w, err)
		return
	}
	writeData(w, status, data)
}
