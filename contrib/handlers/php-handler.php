#!/usr/bin/env php
<?php
/*
 * php-handler.php - an example jobrun exec handler in PHP (CLI, PHP 8):
 * the job code of an existing PHP application, run by jobrun instead of a
 * PHP polling loop.  Keep the shape; replace work() with your own code.
 *
 *   [type.order_export]
 *   handler = exec
 *   command = /usr/bin/php /usr/local/lib/jobrun/php-handler.php
 *   timeout = 60
 *
 * What jobrun gives it (HANDLERS in jobrun(7)):
 *   stdin             the job's payload as JSON ({} when it is NULL), here
 *                     {"order_id":10001} or {"order_id":10001,"lines":5000}
 *   JOB_ID            the job's id
 *   JOB_TYPE          its type
 *   JOB_BUSINESS_KEY  its unique key.  A job can run more than once (after a
 *                     crash, or when its lock expired while it ran): pass the
 *                     key on to whatever can drop a repeat (an Idempotency-Key
 *                     header, a UNIQUE column written in the same transaction
 *                     as the work).
 *   JOB_ATTEMPT       this attempt, 1 on the first
 *   JOB_MAX_ATTEMPTS  the job's max_attempts
 *   JOBRUN_CHECKPOINT_FD, JOBRUN_CHECKPOINT
 *                     when the table has sql/002_checkpoint.sql: the file
 *                     descriptor (3) on which to save progress, one JSON
 *                     line at a time, and the last progress saved by an
 *                     earlier attempt (RESUMABLE JOBS in jobrun(7))
 *
 * What it answers, by its exit status:
 *   0   done: the job becomes success
 *   75  not now (EX_TEMPFAIL), a TemporaryFailure here: retried after the
 *       backoff delay, failed once JOB_ATTEMPT reaches JOB_MAX_ATTEMPTS
 *   65  never (EX_DATAERR), a PermanentFailure here: failed at once;
 *       "jobrun retry ID" puts it back once the cause is fixed
 *   99  not yet, a NotYet here: run again after the delay printed on the
 *       last line of output, without spending an attempt
 *   1   any other exception or PHP error: retried with backoff, like 75
 *
 * Everything it prints (stdout and stderr) is kept, and when the job does
 * not succeed the end of it becomes the job's last_error: the last line
 * says why.
 *
 * Coming from a PHP loop (while (true) { SELECT ... FOR UPDATE; handle();
 * UPDATE ...; sleep(); }): keep the code that handles one job, called from
 * work() below, and remove the loop, the SELECT/UPDATE of the job row, the
 * retry counting and the sleep; jobrun does those.  Map the loop's
 * outcomes to the exceptions below.
 */

declare(strict_types=1);

/* The job cannot succeed as it is: exit 65, failed at once. */
final class PermanentFailure extends RuntimeException
{
}

/* Worth trying again later: exit 75, retried with backoff. */
final class TemporaryFailure extends RuntimeException
{
}

/* Not yet: exit 99, run again in $delay seconds without spending an
 * attempt (after a checkpoint without a delay: at once). */
final class NotYet extends RuntimeException
{
    public function __construct(string $message, public ?int $delay = null)
    {
        parent::__construct($message);
    }
}

/* The job as jobrun describes it in the environment. */
final class Job
{
    public function __construct(
        public int $id,
        public string $type,
        public string $businessKey,
        public int $attempt,
        public int $maxAttempts,
        public mixed $checkpoint,
    ) {
    }

    public static function fromEnvironment(): self
    {
        $checkpoint = getenv('JOBRUN_CHECKPOINT');
        return new self(
            (int)getenv('JOB_ID'),
            (string)getenv('JOB_TYPE'),
            (string)getenv('JOB_BUSINESS_KEY'),
            (int)(getenv('JOB_ATTEMPT') ?: 1),
            (int)(getenv('JOB_MAX_ATTEMPTS') ?: 1),
            $checkpoint === false ? null
                : json_decode($checkpoint, true, 512, JSON_THROW_ON_ERROR),
        );
    }

    /* Save progress: one line of JSON on JOBRUN_CHECKPOINT_FD.  Without
     * the checkpoint columns jobrun sets no descriptor, and this does
     * nothing.  Call it after each batch of work, not after each item. */
    public function checkpoint(mixed $state): void
    {
        static $fd = null;
        $n = getenv('JOBRUN_CHECKPOINT_FD');
        if ($n === false || !ctype_digit($n)) {
            return;
        }
        $fd ??= fopen("php://fd/$n", 'w');
        if ($fd === false
            || fwrite($fd, json_encode($state, JSON_THROW_ON_ERROR) . "\n") === false
            || !fflush($fd)) {
            throw new TemporaryFailure('cannot write a checkpoint');
        }
        $this->checkpoint = $state;
    }
}

/*
 * The work of one job: replace with your application's code, for example
 *
 *   require '/srv/app/vendor/autoload.php';
 *   $app = App\Kernel::boot();
 *   $app->get(OrderExporter::class)->export($payload['order_id'],
 *       idempotencyKey: $job->businessKey);
 *
 * and throw PermanentFailure, TemporaryFailure or NotYet for outcomes other
 * than success.  This one "exports" an order: lines 1..N of it, saving its
 * progress every 100 lines, so a later attempt resumes after the last
 * checkpoint.  Returns the line to print on success.
 */
function work(array $payload, Job $job): string
{
    $order = $payload['order_id'] ?? null;
    if (!is_int($order) || $order <= 0) {
        // The same payload will be just as wrong on every attempt.
        throw new PermanentFailure('payload has no positive integer order_id');
    }
    $lines = $payload['lines'] ?? 1;
    if (!is_int($lines) || $lines < 1 || $lines > 1000000) {
        throw new PermanentFailure("order $order: lines must be 1..1000000");
    }

    $done = is_array($job->checkpoint) && is_int($job->checkpoint['line'] ?? null)
        ? $job->checkpoint['line'] : 0;
    if ($done > 0) {
        echo "order $order: resuming after line $done\n";
    }
    // Demonstration only: a payload can ask for the other outcomes.
    switch ($payload['demo'] ?? null) {
        case 'temporary':
            throw new TemporaryFailure("order $order: export API unreachable");
        case 'not_yet':
            throw new NotYet("order $order: warehouse closed", 300);
    }
    for ($line = $done + 1; $line <= $lines; $line++) {
        // ... export line $line of order $order, idempotently ...
        if ($line % 100 === 0) {
            $job->checkpoint(['line' => $line]);
        }
    }
    return "order $order: exported " . ($lines - $done) . " of $lines lines";
}

// PHP warnings and notices become exceptions: a job that half-worked must
// not end with exit status 0.
set_error_handler(static function (int $severity, string $message,
    string $file, int $line): bool {
    throw new ErrorException($message, 0, $severity, $file, $line);
});

$raw = '';
try {
    $job = Job::fromEnvironment();
    $raw = stream_get_contents(STDIN);
    if ($raw === false) {
        throw new TemporaryFailure('cannot read the payload on standard input');
    }
    $payload = json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
    if (!is_array($payload) || array_is_list($payload) && $payload !== []) {
        throw new PermanentFailure('payload is not a JSON object');
    }
    echo "job $job->id ($job->type $job->businessKey), attempt ",
        "$job->attempt of $job->maxAttempts\n";
    $done = work($payload, $job);
    echo $done, "\n";
    exit(0);
} catch (PermanentFailure $e) {
    echo 'permanent failure: ', $e->getMessage(), ': ',
        substr(trim((string)$raw), 0, 200), "\n";
    exit(65);
} catch (TemporaryFailure $e) {
    echo 'will retry: ', $e->getMessage(), "\n";
    exit(75);
} catch (NotYet $e) {
    echo 'not yet: ', $e->getMessage(), "\n";
    if ($e->delay !== null) {
        echo $e->delay, "\n";       // the delay goes alone on the last line
    }
    exit(99);
} catch (Throwable $e) {
    // A bug, a PHP error, the database gone: retried with backoff.
    echo get_class($e), ': ', $e->getMessage(), ' at ',
        basename($e->getFile()), ':', $e->getLine(), "\n";
    exit(1);
}
