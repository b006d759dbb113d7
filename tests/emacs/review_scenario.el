;;; review_scenario.el --- a review's finding in Emacs's Flymake via eglot  -*- lexical-binding: t; -*-

;; For tests/editors/emacs.rs, run with `emacs --batch -Q -l' (no prompt to
;; answer): eglot connects to `tandem lsp' on SCENARIO_FILE (text-mode),
;; sends `tandem.review' of that file (the scripted model reports one
;; finding), and Flymake, eglot's diagnostics front end, shows it. The
;; report (SCENARIO_OUT) holds each Flymake diagnostic's line, type and text.

(setq warning-minimum-level :error)
(dolist (dir (file-expand-wildcards "/usr/share/emacs/site-lisp/elpa/*"))
  (add-to-list 'load-path dir))
(require 'eglot)
(require 'flymake)
(require 'json)

(defvar scenario-report (list (cons 'errors nil)))
(defvar scenario-done nil)

(defun scenario-finish (&optional error)
  (when error (push (format "%s" error) (alist-get 'errors scenario-report)))
  (setf (alist-get 'errors scenario-report) (vconcat (alist-get 'errors scenario-report)))
  (with-temp-file (getenv "SCENARIO_OUT")
    (insert (json-encode scenario-report)))
  (setq scenario-done t))

(add-to-list 'eglot-server-programs `(text-mode . (,(getenv "TANDEM_BIN") "lsp")))

(defun scenario-diagnostics ()
  (with-current-buffer (get-file-buffer (getenv "SCENARIO_FILE"))
    (mapcar (lambda (d)
              (list (cons 'line (line-number-at-pos (flymake-diagnostic-beg d)))
                    (cons 'type (format "%s" (flymake-diagnostic-type d)))
                    (cons 'text (flymake-diagnostic-text d))))
            (flymake-diagnostics))))

(condition-case err
    (progn
      (find-file (getenv "SCENARIO_FILE"))
      (text-mode)
      (apply #'eglot (eglot--guess-contact))
      (let ((deadline (+ (float-time) 30)))
        (while (and (not (eglot-current-server)) (< (float-time) deadline))
          (accept-process-output nil 0.1)))
      (unless (eglot-current-server) (error "eglot did not connect"))
      (let ((answer (jsonrpc-request (eglot-current-server) :workspace/executeCommand
                                     '(:command "tandem.review" :arguments [(:files ["notes.txt"])])
                                     :timeout 60)))
        (setf (alist-get 'status scenario-report) (plist-get answer :status)))
      (let ((deadline (+ (float-time) 30)))
        (while (and (null (scenario-diagnostics)) (< (float-time) deadline))
          (flymake-start)
          (accept-process-output nil 0.2)))
      (setf (alist-get 'diagnostics scenario-report) (vconcat (scenario-diagnostics)))
      (scenario-finish))
  (error (scenario-finish err)))
(kill-emacs 0)
