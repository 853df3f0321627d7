<?php
/*
 * http-receiver.php - an example endpoint for jobrun's http handler, for a
 * PHP 8 application on MariaDB or MySQL through PDO (pdo_mysql).
 *
 * jobrun POSTs each job it claims to this script and records the job's
 * outcome from the status code (see HANDLERS in jobrun(7)):
 *
 *   2xx                        success: the job is done
 *   503 with Retry-After: N    retry in N seconds (capped at backoff_cap);
 *                              408, 425, 429 and any 5xx also retry, with
 *                              the normal backoff when there is no
 *                              Retry-After, until max_attempts
 *   422, 400, 401, other 4xx   permanent failure: the job is failed at once
 *
 * On a retry or failure jobrun keeps the status line and the start of the
 * body in the job's last_error, so the body here is one short line saying
 * why.
 *
 * The request body is the job:
 *
 *   {"id":42,"type":"order_push","business_key":"order_push:10001",
 *    "attempt":1,"max_attempts":5,"payload":{"order_id":10001}}
 *
 * with the headers Idempotency-Key and Authorization, set on the jobrun
 * side by
 *
 *   [type.order_push]
 *   handler = http
 *   url = https://app.example.com/internal/jobs/order-push
 *   header_env = Authorization: ORDER_PUSH_TOKEN
 *
 * with ORDER_PUSH_TOKEN='Bearer <token>' in jobrun's environment, and the
 * bare <token> in JOBRUN_RECEIVER_TOKEN in this script's (PHP-FPM:
 * env[JOBRUN_RECEIVER_TOKEN] in the pool; Apache: SetEnv).  The database
 * settings come from APP_DB_DSN, APP_DB_USER and APP_DB_PASSWORD.
 *
 * To try it, with the jobrun_done table below and, for do_job()'s example
 * work, a table orders (id, status, pushed_at) in that database:
 *
 *   JOBRUN_RECEIVER_TOKEN=<token> APP_DB_DSN='mysql:host=localhost;dbname=app' \
 *   APP_DB_USER=app APP_DB_PASSWORD=... php -S 127.0.0.1:8080 http-receiver.php
 *
 * and url = http://127.0.0.1:8080/ in the [type] section.  Replace
 * push_order(), do_job()'s example, with your job's work.  PHP's built-in
 * server names 422 "Unknown Status Code", which last_error then shows.
 *
 * The Idempotency-Key is the business_key, byte for byte, with letters,
 * digits and "-._~:" as they are and every other byte (blanks, "%", "/",
 * NUL, control characters, each byte of a non-ASCII character) written
 * %XX with capital hex digits: "order:7" stays "order:7", " order:7" is
 * "%20order:7", "a/b" is "a%2Fb", "pay:1%0AX" is "pay:1%250AX", "é" is
 * "%C3%A9".  So distinct keys always give distinct headers, and the
 * header is plain ASCII.  A job whose business_key is NULL comes without
 * the header (its body's business_key is null); an empty business_key
 * gives an empty header.  idempotency_key() below is the same encoding;
 * the script checks that the header matches the body's business_key.
 *
 * Why the idempotency table: jobrun marks a job only after this script has
 * answered.  If jobrun, its host or its database connection dies in
 * between, the job is recovered once its lock expires and delivered again,
 * with the same Idempotency-Key.  The second delivery must not do the work
 * twice.  So the key is inserted, under a UNIQUE index, in the same
 * transaction as the work:
 *
 *   CREATE TABLE jobrun_done (
 *     id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT,
 *     idem_key VARCHAR(1536) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
 *     job_id BIGINT UNSIGNED NOT NULL,
 *     job_type VARCHAR(64) NOT NULL,
 *     done_at DATETIME NOT NULL,
 *     PRIMARY KEY (id),
 *     UNIQUE KEY uniq_idem_key (idem_key)
 *   ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;
 *
 * idem_key compares byte for byte (ascii_bin): under a case-insensitive
 * collation "Order:7" and "order:7", two jobs of a table whose
 * business_key is case-sensitive, would be one key, and the second job's
 * work would be skipped as "already done".  1536 is 128 characters of
 * business_key at up to 4 bytes each, 3 characters a byte when encoded.
 * A job without a business_key is recorded as "#job:<id>", which no
 * encoded key can be ("#" is always %23).
 *
 * A key that is already there was committed together with its work: the
 * answer is 200 "already done" and the work is not repeated.  A delivery
 * that arrives while the first one is still working waits on the first
 * one's uncommitted key: it gets "already done" when the first commits,
 * and does the work itself when the first rolls back.  Rows of jobrun_done
 * can be deleted once the job is no longer in jobrun's table (after
 * "jobrun purge").
 *
 * The work must be done through $pdo, inside the transaction, to be
 * undone with it.  Work elsewhere (a call to another API) is not rolled
 * back: pass the Idempotency-Key on to that API as well.
 *
 * The payload arrives as the application stored it; it is decoded with
 * JSON_BIGINT_AS_STRING, so an integer past PHP_INT_MAX (an id of
 * 18446744073709551615) comes as a string of its digits, not as a float
 * that has lost them.
 */

declare(strict_types=1);

/* The job cannot succeed as it is: answered 422, jobrun fails the job. */
final class PermanentProblem extends RuntimeException
{
}

/* Worth trying again later: answered 503 with Retry-After. */
final class TemporaryProblem extends RuntimeException
{
    public function __construct(string $message, public int $retryAfter = 60)
    {
        parent::__construct($message);
    }
}

/* Answer and stop.  Status 2xx: jobrun marks the job success. */
function answer(int $status, string $message, ?int $retryAfter = null): void
{
    http_response_code($status);
    header('Content-Type: text/plain; charset=utf-8');
    header('Cache-Control: no-store');
    if ($retryAfter !== null) {
        header('Retry-After: ' . $retryAfter);
    }
    echo $message, "\n";
    exit;
}

function rollback(PDO $pdo): void
{
    if ($pdo->inTransaction()) {
        $pdo->rollBack();
    }
}

/* A request header's value, '' when there is none. */
function request_header(string $name): string
{
    $key = 'HTTP_' . strtoupper(str_replace('-', '_', $name));
    if (isset($_SERVER[$key])) {
        return (string)$_SERVER[$key];
    }
    /* Some set-ups (Apache with CGI) pass Authorization only here. */
    if (isset($_SERVER['REDIRECT_' . $key])) {
        return (string)$_SERVER['REDIRECT_' . $key];
    }
    if (function_exists('getallheaders')) {
        $all = array_change_key_case(getallheaders(), CASE_LOWER);
        return (string)($all[strtolower($name)] ?? '');
    }
    return '';
}

/* jobrun's Idempotency-Key for a business key: letters, digits and
 * "-._~:" as they are, every other byte %XX in capitals. */
function idempotency_key(string $businessKey): string
{
    return preg_replace_callback('/[^A-Za-z0-9\-._~:]/',
        fn (array $m): string => sprintf('%%%02X', ord($m[0])), $businessKey);
}

/*
 * Your work goes here.  Throw PermanentProblem when retrying cannot help
 * (the order does not exist) and TemporaryProblem when it can (the order
 * is locked for a while).  Any other exception ends the script with a
 * 500 from PHP, which jobrun retries with its backoff.
 */
function do_job(PDO $pdo, array $job): void
{
    switch ($job['type']) {
    case 'order_push':
        push_order($pdo, $job['payload']);
        return;
    default:
        throw new PermanentProblem('no handler for job type ' . $job['type']);
    }
}

function push_order(PDO $pdo, mixed $payload): void
{
    $orderId = is_array($payload) ? ($payload['order_id'] ?? null) : null;
    if (!is_int($orderId) || $orderId <= 0) {
        throw new PermanentProblem('payload has no order_id');
    }
    $select = $pdo->prepare('SELECT status FROM orders WHERE id = ? FOR UPDATE');
    $select->execute([$orderId]);
    $status = $select->fetchColumn();
    if ($status === false) {
        throw new PermanentProblem("no order $orderId");
    }
    if ($status === 'audit') {
        throw new TemporaryProblem("order $orderId is being audited", 600);
    }
    $update = $pdo->prepare('UPDATE orders SET pushed_at = NOW() WHERE id = ?');
    $update->execute([$orderId]);
}

/* --- the request ------------------------------------------------------ */

/* A misconfigured receiver is the operator's to fix, not the job's fault:
 * 500, so jobrun retries with backoff. */
$token = (string)(getenv('JOBRUN_RECEIVER_TOKEN') ?: ($_SERVER['JOBRUN_RECEIVER_TOKEN'] ?? ''));
if ($token === '') {
    error_log('http-receiver: JOBRUN_RECEIVER_TOKEN is not set');
    answer(500, 'receiver not configured');
}
/* hash_equals: the comparison takes as long however much of it matches.
 * A wrong token is 401: jobrun fails the job at once.  After fixing the
 * token, "jobrun retry --failed --type=order_push" puts such jobs back. */
if (!hash_equals('Bearer ' . $token, request_header('Authorization'))) {
    answer(401, 'bad or missing Authorization');
}
if (!in_array($_SERVER['REQUEST_METHOD'] ?? '', ['POST', 'PUT'], true)) {
    header('Allow: POST, PUT');
    answer(405, 'POST a job');
}

/* A request that is not a job will not become one on a retry: 400, so
 * jobrun fails the job at once. */
try {
    $job = json_decode((string)file_get_contents('php://input'), true, 64,
        JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
} catch (JsonException $e) {
    answer(400, 'body is not JSON: ' . $e->getMessage());
}
if (!is_array($job) || !is_int($job['id'] ?? null) || !is_string($job['type'] ?? null)
    || !array_key_exists('business_key', $job)
    || !(is_string($job['business_key']) || $job['business_key'] === null)
    || !array_key_exists('payload', $job)) {
    answer(400, 'body is not a jobrun job');
}
/* The key of this job's work: the header, which must be the business
 * key's encoding (a proxy that rewrote it would make repeats look new);
 * for a job without a business key, its id. */
if ($job['business_key'] === null) {
    $key = '#job:' . $job['id'];
} else {
    $key = request_header('Idempotency-Key');
    if (strlen($key) > 1536 || $key !== idempotency_key($job['business_key'])) {
        answer(400, 'Idempotency-Key does not match business_key');
    }
}

try {
    $pdo = new PDO(
        (string)getenv('APP_DB_DSN') ?: 'mysql:host=localhost;dbname=app;charset=utf8mb4',
        (string)getenv('APP_DB_USER') ?: 'app',
        (string)getenv('APP_DB_PASSWORD'),
        [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION, PDO::ATTR_EMULATE_PREPARES => false],
    );
} catch (PDOException $e) {
    /* The database is down or refuses us: 503, jobrun tries again in a
     * minute.  The message stays in our log; it may name hosts. */
    error_log('http-receiver: connect: ' . $e->getMessage());
    answer(503, 'database unavailable', 60);
}

try {
    $pdo->beginTransaction();
    $claim = $pdo->prepare('INSERT INTO jobrun_done (idem_key, job_id, job_type, done_at)'
        . ' VALUES (?, ?, ?, NOW())');
    try {
        $claim->execute([$key, $job['id'], $job['type']]);
    } catch (PDOException $e) {
        if (($e->errorInfo[1] ?? 0) !== 1062) {     /* ER_DUP_ENTRY */
            throw $e;
        }
        /* Done by an earlier delivery: 2xx again, so jobrun marks the job
         * success, and nothing is done twice. */
        rollback($pdo);
        answer(200, 'already done');
    }
    do_job($pdo, $job);
    $pdo->commit();
} catch (PermanentProblem $e) {
    /* 422: jobrun fails the job now; the reason goes to last_error.  The
     * rollback removes the key too, so "jobrun retry" can run it again
     * once the cause is fixed. */
    rollback($pdo);
    answer(422, $e->getMessage());
} catch (TemporaryProblem $e) {
    /* 503 + Retry-After: jobrun retries after that many seconds (at most
     * its backoff_cap), or fails the job if this was its last attempt. */
    rollback($pdo);
    answer(503, $e->getMessage(), $e->retryAfter);
} catch (PDOException $e) {
    rollback($pdo);
    $code = $e->errorInfo[1] ?? 0;
    if ($code === 1205 || $code === 1213) {
        /* Lock wait timeout or deadlock: retry soon. */
        answer(503, 'database busy, try again', 5);
    }
    /* Anything else: 500, jobrun retries with its backoff. */
    error_log('http-receiver: job ' . $job['id'] . ': ' . $e->getMessage());
    answer(500, 'database error');
}

/* Committed: 200, jobrun marks the job success. */
answer(200, 'done');
