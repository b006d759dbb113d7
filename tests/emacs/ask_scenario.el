;;; ask_scenario.el --- one Tandem run in a real Emacs with eglot  -*- lexical-binding: t; -*-

;; For tests/editors/emacs.rs, which runs `emacs -nw -Q -l` this file inside
;; tmux and answers eglot's own prompts with keystrokes.  Environment:
;; TANDEM_BIN, SCENARIO_FILE (opened, text-mode), SCENARIO_TYPED (typed on
;; line 1 and left unsaved), SCENARIO_MODE (permissionMode), SCENARIO_CONFIRM
;; (`nil' turns eglot's own confirmation off), SCENARIO_VIA (`codeaction':
;; run the server's code action as eglot does, synchronously),
;; SCENARIO_PROMPT, SCENARIO_OUT (the JSON report).
;;
;; eglot 1.9 sends `didChange' from an idle timer, so after a prompt the
;; edit's didChange goes out at the user's next keystroke: the test sends
;; one, as a user would.

;; No native compilation while the test runs: Emacs 28 compiles the loaded
;; packages in the background, and when a compilation ends its warnings
;; pop up a *Warnings* window over the scenario (on a quiet machine, in
;; the middle of the run).
(setq native-comp-deferred-compilation nil)
(setq native-comp-async-report-warnings-errors nil)
(setq warning-minimum-level :error)

;; -Q loads no packages: Debian's elpa-eglot and its dependencies (newer
;; project and xref) are in the system package directory.
(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (add-to-list 'load-path dir))
(require 'eglot)
(require 'json)

(defvar scenario-report (list (cons 'events nil) (cons 'errors nil)))
(defvar scenario-events nil)
(defvar scenario-asked nil)

(defun scenario-finish (&optional error)
  (when error (push (format "%s" error) (alist-get 'errors scenario-report)))
  (with-current-buffer (get-file-buffer (getenv "SCENARIO_FILE"))
    (setf (alist-get 'buffer scenario-report) (buffer-substring-no-properties (point-min) (point-max)))
    (setf (alist-get 'modified scenario-report) (if (buffer-modified-p) t :json-false)))
  (setf (alist-get 'events scenario-report) (vconcat (reverse scenario-events)))
  (setf (alist-get 'errors scenario-report) (vconcat (alist-get 'errors scenario-report)))
  (with-temp-file (getenv "SCENARIO_OUT")
    (insert (json-encode scenario-report)))
  (kill-emacs 0))

;; The live transcript.
(cl-defmethod eglot-handle-notification
  (_server (_method (eql tandem/runEvent)) &key event &allow-other-keys)
  (push event scenario-events)
  ;; A run started without waiting (a code action) ends with this event.
  (when (and (equal (plist-get event :type) "end")
             (equal (getenv "SCENARIO_VIA") "codeaction"))
    (setf (alist-get 'end scenario-report) event)
    (run-at-time 0 nil #'scenario-finish)))

(defun scenario-code-action ()
  "Run \"Tandem: explain this code\" on lines 1-2 as eglot runs a code
action: `eglot-execute-command', which waits for the answer (10 s at most)."
  (unless scenario-asked
    (setq scenario-asked t)
    (set-buffer (get-file-buffer (getenv "SCENARIO_FILE")))
    (let* ((server (eglot-current-server))
           (uri (eglot--path-to-uri (getenv "SCENARIO_FILE")))
           (actions (jsonrpc-request
                     server :textDocument/codeAction
                     `(:textDocument (:uri ,uri)
                       :range (:start (:line 0 :character 0) :end (:line 1 :character 0))
                       :context (:diagnostics []))))
           (action (seq-find (lambda (a) (equal (plist-get a :title) "Tandem: explain this code"))
                             actions))
           (command (plist-get action :command)))
      ;; SCENARIO_BUSY_MS: Emacs is busy (a timer that runs while the
      ;; command waits) for that long after sending it, so the answer and
      ;; what the server sends next arrive in one read, as on a loaded
      ;; machine.
      (let ((busy (string-to-number (or (getenv "SCENARIO_BUSY_MS") "0"))))
        (when (> busy 0)
          ;; Read output in big pieces, as eglot's manual advises.
          (setq read-process-output-max (* 1024 1024))
          (run-at-time 0 nil (lambda ()
                               (let ((end (+ (float-time) (/ busy 1000.0))))
                                 (while (< (float-time) end)))))))
      (setf (alist-get 'result scenario-report)
            (eglot-execute-command server (plist-get command :command) (plist-get command :arguments))))))

;; SCENARIO_TYPE_DURING: the user types a line at the top of the file while
;; eglot's "Server wants to edit … Proceed?" is showing (the text arrives
;; from elsewhere: a timer here, as an `emacsclient --eval' would), then
;; answers y; every later such question is answered y too. The typing's
;; didChange goes out at once, and so does the applied edit's (a timer is
;; not a keystroke, so eglot's idle timer may not run).
(defvar scenario-confirms 0)
(when (not (string-empty-p (or (getenv "SCENARIO_TYPE_DURING") "")))
  (advice-add
   'y-or-n-p :around
   (lambda (orig prompt &rest args)
     (if (not (string-match-p "Server wants to edit" prompt))
         (apply orig prompt args)
       (setq scenario-confirms (1+ scenario-confirms))
       (setf (alist-get 'confirms scenario-report) scenario-confirms)
       (let ((buffer (get-file-buffer (getenv "SCENARIO_FILE"))))
         (with-current-buffer buffer
           (when (= scenario-confirms 1)
             (save-excursion
               (goto-char (point-min))
               (insert (getenv "SCENARIO_TYPE_DURING") "\n"))
             (eglot--signal-textDocument/didChange))
           (run-at-time 0.2 nil (lambda ()
                                  (with-current-buffer buffer
                                    (eglot--signal-textDocument/didChange))))))
       t))))

;; SCENARIO_CONFIRM=nil: the README's advice for Tandem's default mode,
;; so eglot does not ask a second time.
(when (equal (getenv "SCENARIO_CONFIRM") "nil")
  (setq eglot-confirm-server-initiated-edits nil))

(add-to-list 'eglot-server-programs
             `(text-mode . (,(getenv "TANDEM_BIN") "lsp"
                            :initializationOptions
                            ;; verifyMs: the test's keystroke after a prompt
                            ;; may be slow on a loaded machine.
                            (:tandem (:permissionMode ,(getenv "SCENARIO_MODE")
                                      :timeouts (:verifyMs 30000))))))

(defun scenario-ask ()
  "Send tandem.ask without waiting for it (as a generic client should)."
  (unless scenario-asked
    (setq scenario-asked t)
    (set-buffer (get-file-buffer (getenv "SCENARIO_FILE")))
    (let ((server (eglot-current-server))
          (uri (eglot--path-to-uri (getenv "SCENARIO_FILE"))))
      (jsonrpc-async-request
       server :workspace/executeCommand
       `(:command "tandem.ask"
         :arguments [(:prompt ,(getenv "SCENARIO_PROMPT") :textDocument (:uri ,uri))])
       :success-fn (lambda (result)
                     (setf (alist-get 'result scenario-report) result)
                     (run-at-time 0 nil #'scenario-finish))
       :error-fn (lambda (err)
                   (setf (alist-get 'ask_error scenario-report) (format "%S" err))
                   (scenario-finish))
       :timeout 60
       :timeout-fn (lambda () (scenario-finish "the run did not finish in 60 s"))))))

;; Ask once eglot manages the buffer and the user has typed: send the
;; typing's didChange (a timer is not a keystroke, so eglot's idle timer
;; may not run), then ask.
(defvar scenario-typed nil)
(defvar scenario-poll nil)
(setq scenario-poll
      (run-with-timer
       0.1 0.1
       (lambda ()
         (let ((buffer (get-file-buffer (getenv "SCENARIO_FILE"))))
           (when (and scenario-typed buffer
                      (with-current-buffer buffer (eglot-current-server)))
             (cancel-timer scenario-poll)
             (with-current-buffer buffer
               (eglot--signal-textDocument/didChange))
             ;; An error here would only be logged by the timer: report it.
             (condition-case err
                 (if (equal (getenv "SCENARIO_VIA") "codeaction")
                     (scenario-code-action)
                   (scenario-ask))
               (error (scenario-finish err))))))))

(condition-case err
    (progn
      (find-file (getenv "SCENARIO_FILE"))
      (text-mode)
      (eglot-ensure)
      ;; eglot-ensure connects after this command; type once connected.
      (add-hook 'eglot-managed-mode-hook
                (lambda ()
                  (when (eglot-managed-p)
                    (run-at-time
                     0 nil
                     (lambda ()
                       (with-current-buffer (get-file-buffer (getenv "SCENARIO_FILE"))
                         (goto-char (point-min))
                         (delete-region (point) (line-end-position))
                         (insert (getenv "SCENARIO_TYPED"))
                         (setq scenario-typed t))))))))
  (error (scenario-finish err)))
