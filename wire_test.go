package billing

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// The provider's send and send-to-bank status checks answer the word "success" for the
// request, whatever became of the transfer: the word is no failure, and no success of
// the transaction either.
func TestResponseCodeSuccessWord(t *testing.T) {
	for code, failure := range map[ResponseCode]bool{
		"success": false, "Success": false, "SUCCESS": false,
		CodeSuccess: false, CodeAccepted: false, CodePreapprovalOK: false, "": false,
		CodeFailed: true, CodeInsufficientBalance: true, "failed": true, "successful-ish": true,
	} {
		assert.Equal(t, failure, code.IsFailure(), "%q", code)
	}
	assert.NotEqual(t, CodeSuccess, ResponseCode("success"), "the word must not read as the transaction's 0000")
}
