// The hosted checkout page's script. The page works without it (every method
// and step shows at once); with it the payer sees one method and one step at a
// time, a page that embeds the checkout (the web SDK's iframe or modal) hears
// about the session through postMessage, and a payer who opened the page
// directly is sent back to the merchant's returnUrl once the session is final.
(function () {
  'use strict';

  var stateNode = document.getElementById('checkout-state');
  if (!stateNode) {
    return; // no such session: nothing to report
  }
  var state = JSON.parse(stateNode.textContent);
  var embedded = window.parent !== window;

  // post tells the embedding page about the session. The target origin is
  // '*' because the sandbox cannot know which merchant page embeds it; the
  // messages carry only what this page shows, and receivers check the
  // sender's origin (the web SDK does).
  function post(event, data) {
    if (embedded) {
      window.parent.postMessage({ source: 'billing-checkout', event: event, data: data }, '*');
    }
  }

  function setUpMethods(initial) {
    var chooser = document.querySelector('.methods');
    var panels = document.querySelectorAll('.panel');
    function show(method) {
      panels.forEach(function (panel) { panel.hidden = panel.dataset.method !== method; });
    }
    chooser.hidden = false;
    chooser.addEventListener('change', function (e) { show(e.target.value); });
    show(initial);
  }

  // The mobile-money form has two steps: choose the network and number and
  // confirm (the prompt goes to the phone), then enter the PIN.
  function setUpMobileMoney(showPIN) {
    var form = document.querySelector('form.mobile-money');
    var pinStep = form.querySelector('[data-step="pin"]');
    var confirm = form.querySelector('[data-action="confirm"]');
    var back = form.querySelector('[data-action="back"]');
    var network = form.querySelector('#network');
    var phone = form.querySelector('#phone');
    var prompt = form.querySelector('#prompt');

    function toPIN(focus) {
      if (phone.value.trim() === '') {
        phone.setAttribute('aria-invalid', 'true');
        phone.focus();
        return;
      }
      // The PIN field is described by the prompt, so it is read out with it.
      prompt.textContent = 'We sent a payment prompt to ' + phone.value.trim() + ' on ' +
        network.options[network.selectedIndex].text + '. ' + prompt.dataset.approve;
      pinStep.hidden = false;
      confirm.hidden = true;
      back.hidden = false;
      if (focus) {
        pin.focus();
      }
    }
    function toWallet(focus) {
      pinStep.hidden = true;
      confirm.hidden = false;
      back.hidden = true;
      if (focus) {
        phone.focus();
      }
    }
    confirm.addEventListener('click', function () { toPIN(true); });
    back.addEventListener('click', function () { toWallet(true); });
    // Enter in the network or number field confirms; it does not send a form
    // without a PIN.
    [network, phone].forEach(function (field) {
      field.addEventListener('keydown', function (e) {
        if (e.key === 'Enter' && pinStep.hidden) {
          e.preventDefault();
          toPIN(true);
        }
      });
    });
    var pin = form.querySelector('#pin');
    form.addEventListener('submit', function (e) {
      if (pinStep.hidden) {
        e.preventDefault();
        toPIN(true);
      } else if (!/^[0-9]{4}$/.test(pin.value)) {
        e.preventDefault(); // the server would only ask for the PIN again
        pin.setAttribute('aria-invalid', 'true');
        pin.focus();
      }
    });
    if (showPIN) {
      toPIN(false);
    } else {
      toWallet(false);
    }
  }

  // A form is sent once: a second click while the first is on its way would
  // only find the session already final.
  function sendOnce() {
    document.querySelectorAll('form').forEach(function (form) {
      form.addEventListener('submit', function (e) {
        if (e.defaultPrevented) {
          return;
        }
        if (form.dataset.sent) {
          e.preventDefault();
          return;
        }
        form.dataset.sent = 'true';
      });
    });
  }

  function watchSize() {
    if (!embedded || typeof ResizeObserver !== 'function') {
      return;
    }
    var last = '';
    new ResizeObserver(function () {
      var root = document.documentElement;
      var size = { width: root.scrollWidth, height: root.scrollHeight };
      var key = size.width + 'x' + size.height;
      if (key !== last) {
        last = key;
        post('checkout.resize', size);
      }
    }).observe(document.body);
  }

  if (state.status === 'PENDING') {
    setUpMethods(state.method);
    setUpMobileMoney(state.problemField === 'pin');
    sendOnce();
    if (state.problemField) {
      document.getElementById('problem-summary').focus();
    }
  }

  post('checkout.loaded', { reference: state.reference, status: state.status });
  if (state.fees) {
    post('checkout.fees', state.fees);
  }
  watchSize();

  if (state.event) {
    if (embedded) {
      post(state.event, state.result);
    } else if (state.returnUrl) {
      window.location.replace(state.returnUrl);
    }
  }
})();
