/*
 * Web SDK of the hosted checkout (SPEC "Client checkout SDKs"), as the sandbox
 * serves it at /sdk/checkout.js. The merchant's backend creates the session
 * (POST /v1/payments, with the client secret, on the server); the page gets
 * purchaseInfo and config from the backend (billing.NewWebCheckout in Go) and
 * hands them to the SDK, which only ever holds the public key:
 *
 *   <script src="{base}/sdk/checkout.js"></script>
 *   const checkout = new BillingCheckout();
 *   checkout.initIframe({ purchaseInfo, config, container: '#pay', iframeStyle: { width: '100%', height: '640px', border: 'none' }, callbacks });
 *   checkout.openModal({ purchaseInfo, config, callbacks });
 *   checkout.redirect({ purchaseInfo, config });
 *   checkout.closePopUp();
 *
 * callbacks: onInit(), onLoad({reference, status}), onPaymentSuccess(payment),
 * onPaymentFailure({code, message, ...}), onFeesChanged({amount, fee, net, currency}),
 * onResize({width, height}) (iframe and modal) and onClose() (when closePopUp or the
 * payer closes the checkout). Each method throws a TypeError for options that
 * cannot work (a missing public key first of all) and returns a Promise of the
 * session ({reference, checkoutUrl, ...}), or of null when the service refused
 * to start it (onPaymentFailure says why).
 */
(function (global) {
  'use strict';

  var script = document.currentScript;
  var scriptOrigin = script && script.src ? new URL(script.src).origin : global.location.origin;
  var MESSAGE_SOURCE = 'billing-checkout';

  function failure(code, message, extra) {
    return Object.assign({ code: code, message: message }, extra || {});
  }

  function call(callbacks, name, arg) {
    var fn = callbacks[name];
    if (typeof fn !== 'function') {
      return;
    }
    try {
      fn(arg);
    } catch (err) {
      // A merchant's callback that throws must not stop the checkout.
      global.console.error('BillingCheckout: callbacks.' + name + ' threw', err);
    }
  }

  function check(method, options) {
    var where = 'BillingCheckout.' + method + ': ';
    function refuse(message) {
      throw new TypeError(where + message);
    }
    if (!options || typeof options !== 'object') {
      refuse('options are required: { purchaseInfo, config, callbacks }');
    }
    var config = options.config;
    var info = options.purchaseInfo;
    if (!config || typeof config.publicKey !== 'string' || config.publicKey.trim() === '') {
      refuse('config.publicKey is required: the public key of your account (in the sandbox, pk_test_sandbox); ' +
        'never the client secret, which stays on your server');
    }
    if (/^sk_/.test(config.publicKey)) {
      refuse('config.publicKey is a secret key: pass the public key; a secret never belongs in a browser');
    }
    if (typeof config.callbackUrl !== 'string' || !/^https?:\/\/[^/?#]+/.test(config.callbackUrl)) {
      refuse('config.callbackUrl is required: the absolute http or https URL that receives the transaction callback');
    }
    if (config.branding !== undefined && config.branding !== 'enabled' && config.branding !== 'disabled') {
      refuse("config.branding must be 'enabled' or 'disabled'");
    }
    if (!info || typeof info !== 'object') {
      refuse('purchaseInfo is required: { amount, purchaseDescription, customerPhoneNumber, clientReference }');
    }
    if (!Number.isInteger(info.amount) || info.amount <= 0) {
      refuse('purchaseInfo.amount must be a positive integer in minor units (5000 is 50.00)');
    }
    ['purchaseDescription', 'customerPhoneNumber', 'clientReference'].forEach(function (name) {
      if (typeof info[name] !== 'string' || info[name].trim() === '') {
        refuse('purchaseInfo.' + name + ' is required');
      }
    });
    if (options.callbacks != null && typeof options.callbacks !== 'object') {
      refuse('callbacks must be an object of functions');
    }
    return options.callbacks || {};
  }

  function cssSize(value, fallback) {
    if (value === undefined || value === null || value === '') {
      return fallback;
    }
    return typeof value === 'number' ? value + 'px' : String(value);
  }

  function createFrame(url, style) {
    var frame = document.createElement('iframe');
    frame.src = url;
    frame.title = 'Checkout';
    frame.setAttribute('allow', 'payment');
    frame.style.display = 'block';
    frame.style.maxWidth = '100%';
    frame.style.width = cssSize(style.width, '100%');
    frame.style.height = cssSize(style.height, '640px');
    frame.style.border = style.border === undefined || style.border === null ? 'none' : String(style.border);
    return frame;
  }

  function findContainer(container) {
    var found = container;
    if (container === undefined) {
      found = document.getElementById('billing-checkout-iframe');
    } else if (typeof container === 'string') {
      found = document.querySelector(container);
    }
    if (!(found instanceof Element)) {
      throw new TypeError('BillingCheckout.initIframe: no container: pass options.container (an element or a selector), ' +
        'or add <div id="billing-checkout-iframe"></div> to the page');
    }
    return found;
  }

  // buildModal returns a modal dialog with a close button and a body that
  // says the checkout is loading until the frame replaces it. Styles are set
  // through the DOM, which a merchant's Content-Security-Policy allows.
  function buildModal() {
    var dialog = document.createElement('dialog');
    dialog.className = 'billing-checkout-modal';
    dialog.setAttribute('aria-label', 'Checkout');
    Object.assign(dialog.style, {
      padding: '0', border: 'none', borderRadius: '12px', overflow: 'hidden',
      width: 'min(480px, calc(100vw - 16px))', height: 'min(760px, calc(100vh - 16px))',
      maxWidth: '100vw', maxHeight: '100vh', boxShadow: '0 12px 48px rgba(0, 0, 0, .4)', background: '#fff'
    });
    var layout = document.createElement('div');
    Object.assign(layout.style, { display: 'flex', flexDirection: 'column', height: '100%' });
    var bar = document.createElement('div');
    Object.assign(bar.style, { display: 'flex', justifyContent: 'flex-end', padding: '4px', borderBottom: '1px solid #dde2e8' });
    var close = document.createElement('button');
    close.type = 'button';
    close.textContent = 'Close';
    close.setAttribute('aria-label', 'Close checkout');
    Object.assign(close.style, {
      minHeight: '44px', minWidth: '44px', padding: '0 12px', font: 'inherit', fontWeight: '600',
      border: '2px solid #6b7480', borderRadius: '6px', background: '#fff', color: '#1b1f24', cursor: 'pointer'
    });
    var body = document.createElement('div');
    Object.assign(body.style, { flex: '1', minHeight: '0' });
    var loading = document.createElement('p');
    loading.setAttribute('role', 'status');
    loading.textContent = 'Loading the checkout…';
    Object.assign(loading.style, { margin: '24px', textAlign: 'center' });
    body.appendChild(loading);
    bar.appendChild(close);
    layout.appendChild(bar);
    layout.appendChild(body);
    dialog.appendChild(layout);
    return { dialog: dialog, close: close, body: body };
  }

  function BillingCheckout(options) {
    if (!(this instanceof BillingCheckout)) {
      return new BillingCheckout(options);
    }
    // serviceOrigin is where the SDK finds sessions: by default the origin
    // the script was loaded from.
    this.serviceOrigin = (options && options.serviceOrigin) || scriptOrigin;
    this._view = null;
  }

  // _start asks the service for the session purchaseInfo names, with the
  // public key: the answer says which checkout page to load.
  BillingCheckout.prototype._start = function (options) {
    var body = JSON.stringify({ purchaseInfo: options.purchaseInfo, config: options.config });
    return global.fetch(this.serviceOrigin + '/sdk/sessions', {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body
    }).then(function (response) {
      return response.json().catch(function () { return null; }).then(function (answer) {
        if (!response.ok || !answer || answer.success !== true) {
          throw failure(answer && answer.code ? answer.code : 'http_' + response.status,
            answer && answer.message ? answer.message : 'the checkout service answered HTTP ' + response.status,
            { httpStatus: response.status });
        }
        return answer.data;
      });
    }, function (err) {
      throw failure('network_error', 'the checkout service could not be reached: ' + err.message);
    });
  };

  // _listen passes the checkout page's messages to the callbacks, from that
  // frame and its origin only. Success and failure are reported once.
  BillingCheckout.prototype._listen = function (frame, session, callbacks) {
    var origin = new URL(session.checkoutUrl).origin;
    var loaded = false;
    var settled = false;
    function onMessage(e) {
      var m = e.data;
      if (e.origin !== origin || e.source !== frame.contentWindow || !m || m.source !== MESSAGE_SOURCE) {
        return;
      }
      switch (m.event) {
        case 'checkout.loaded':
          if (!loaded) {
            loaded = true;
            call(callbacks, 'onLoad', m.data);
          }
          break;
        case 'checkout.fees':
          call(callbacks, 'onFeesChanged', m.data);
          break;
        case 'checkout.resize':
          call(callbacks, 'onResize', m.data);
          break;
        case 'payment.succeeded':
          if (!settled) {
            settled = true;
            call(callbacks, 'onPaymentSuccess', m.data);
          }
          break;
        case 'payment.failed':
          if (!settled) {
            settled = true;
            call(callbacks, 'onPaymentFailure', failure(m.data.failureCode, m.data.failureMessage, m.data));
          }
          break;
      }
    }
    global.addEventListener('message', onMessage);
    return function () { global.removeEventListener('message', onMessage); };
  };

  // initIframe embeds the checkout in a container of the page: an element,
  // a selector, or by default the element with id billing-checkout-iframe.
  BillingCheckout.prototype.initIframe = function (options) {
    var callbacks = check('initIframe', options);
    var container = findContainer(options.container);
    var self = this;
    this._dismiss();
    var view = { callbacks: callbacks, close: function () {} };
    this._view = view;
    call(callbacks, 'onInit');
    return this._start(options).then(function (session) {
      if (self._view !== view) {
        return null; // closed before it loaded
      }
      var frame = createFrame(session.checkoutUrl, options.iframeStyle || {});
      var stop = self._listen(frame, session, callbacks);
      container.replaceChildren(frame);
      view.close = function () {
        stop();
        frame.remove();
      };
      return session;
    }, function (problem) {
      if (self._view === view) {
        self._view = null;
      }
      call(callbacks, 'onPaymentFailure', problem);
      return null;
    });
  };

  // openModal shows the checkout in a modal dialog over the page. Escape and
  // the Close button close it (onClose), as closePopUp does.
  BillingCheckout.prototype.openModal = function (options) {
    var callbacks = check('openModal', options);
    var self = this;
    this._dismiss();
    var modal = buildModal();
    var returnFocus = document.activeElement;
    var stop = function () {};
    var view = {
      callbacks: callbacks,
      close: function () {
        stop();
        modal.dialog.close();
        modal.dialog.remove();
        if (returnFocus && typeof returnFocus.focus === 'function') {
          returnFocus.focus();
        }
      }
    };
    this._view = view;
    modal.close.addEventListener('click', function () { self.closePopUp(); });
    modal.dialog.addEventListener('cancel', function (e) {
      e.preventDefault();
      self.closePopUp();
    });
    document.body.appendChild(modal.dialog);
    modal.dialog.showModal();
    call(callbacks, 'onInit');
    return this._start(options).then(function (session) {
      if (self._view !== view) {
        return null; // closed before it loaded
      }
      var frame = createFrame(session.checkoutUrl, { width: '100%', height: '100%', border: 'none' });
      stop = self._listen(frame, session, callbacks);
      modal.body.replaceChildren(frame);
      return session;
    }, function (problem) {
      if (self._view === view) {
        self._view = null;
        view.close();
      }
      call(callbacks, 'onPaymentFailure', problem);
      return null;
    });
  };

  // redirect opens the checkout in a new tab. The tab is opened at once,
  // inside the payer's click, so no popup blocker stops it; it gets the
  // checkout's address when the service answers. Once the session is final
  // the page sends the payer to the session's metadata.returnUrl.
  BillingCheckout.prototype.redirect = function (options) {
    var callbacks = check('redirect', options);
    var tab = global.open('', '_blank');
    if (tab) {
      tab.opener = null;
    }
    call(callbacks, 'onInit');
    return this._start(options).then(function (session) {
      if (tab) {
        tab.location.replace(session.checkoutUrl);
      } else {
        global.location.assign(session.checkoutUrl); // no new tab allowed: go there in this one
      }
      return session;
    }, function (problem) {
      if (tab) {
        tab.close();
      }
      call(callbacks, 'onPaymentFailure', problem);
      return null;
    });
  };

  // closePopUp closes the modal or removes the embedded frame, and calls onClose.
  BillingCheckout.prototype.closePopUp = function () {
    var view = this._view;
    if (!view) {
      return;
    }
    this._view = null;
    view.close();
    call(view.callbacks, 'onClose');
  };

  // _dismiss closes what this instance showed before, without onClose: a
  // new checkout replaces it.
  BillingCheckout.prototype._dismiss = function () {
    var view = this._view;
    this._view = null;
    if (view) {
      view.close();
    }
  };

  global.BillingCheckout = BillingCheckout;
})(window);
