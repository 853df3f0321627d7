<?php
/*
 * seed-loop.php - the design of seed 000 ("ThinkPHP 8 + MySQL polling
 * jobs"), ported to plain PHP CLI with PDO for the benchmark: one
 * invocation is one run of Job::run, the controller's loop, as crontab
 * would trigger it.  bench/run invokes it again and again until the queue
 * is drained, as cron would.
 *
 * What is the seed's, statement for statement (the SQL ThinkPHP's query
 * builder sends for each call, through PDO with server-side prepared
 * statements, as think-orm configures PDO::ATTR_EMULATE_PREPARES = false):
 *   - config/job.php: max_seconds 45, batch_size 20, lock_minutes 5,
 *     recover_limit 100;
 *   - Job::run: worker id host:pid:random, recoverExpired() once, then
 *     claim / handle / markSuccess or markRetryOrFailed while time and
 *     batch last; prints {"ok":true,"done":N,"failed":N};
 *   - recoverExpired: UPDATE ... WHERE status = 'processing' AND
 *     locked_until < now LIMIT 100;
 *   - claim: Db::transaction { SELECT * ... WHERE status = 'pending' AND
 *     next_run_at <= now ORDER BY id ASC LIMIT 1 FOR UPDATE; UPDATE ...
 *     attempts + 1 ... WHERE id = ? };
 *   - markSuccess, markRetryOrFailed (backoff 60 * 2^min(attempts, 6),
 *     capped at 3600);
 *   - times are PHP's date(), not the server's NOW();
 *   - the session keeps the server's default isolation (REPEATABLE READ).
 *
 * What differs: no framework (no ThinkPHP bootstrap, routing, token check,
 * or the ORM's SHOW COLUMNS per table), which only makes the port cheaper
 * than the original; php-cli per invocation rather than PHP-FPM behind
 * curl; and handle() knows the benchmark's no-op type "work" (jobrun's
 * handler = noop) besides the seed's order_sync, whose remote call needs
 * an orders table the benchmark does not have.
 *
 * Environment: BENCH_SOCKET (unix socket), BENCH_DB (database), optional
 * BENCH_TABLE (polling_jobs), and BENCH_CLAIMS: a file to which the id of
 * each job claimed is appended (test/39-busy-neighbour.t).
 */

declare(strict_types=1);

$config = [
    'max_seconds' => 45,
    'batch_size' => 20,
    'lock_minutes' => 5,
    'recover_limit' => 100,
];

final class PollingJobService
{
    private PDO $db;
    private array $config;
    private string $table;

    public function __construct(PDO $db, array $config, string $table)
    {
        $this->db = $db;
        $this->config = $config;
        $this->table = $table;
    }

    /* Db::table(...)->where(...)->update(...): one prepared statement. */
    private function execute(string $sql, array $params): PDOStatement
    {
        $stmt = $this->db->prepare($sql);
        $stmt->execute($params);
        return $stmt;
    }

    public function recoverExpired(): void
    {
        $now = date('Y-m-d H:i:s');

        $this->execute(
            "UPDATE `{$this->table}` SET `status` = ?, `locked_by` = ?, "
            . "`locked_until` = ?, `updated_at` = ? "
            . "WHERE `status` = ? AND `locked_until` < ? LIMIT "
            . (int) $this->config['recover_limit'],
            ['pending', null, null, $now, 'processing', $now]
        );
    }

    public function claim(string $workerId): ?array
    {
        $this->db->beginTransaction();
        try {
            $now = date('Y-m-d H:i:s');

            $job = $this->execute(
                "SELECT * FROM `{$this->table}` WHERE `status` = ? "
                . "AND `next_run_at` <= ? ORDER BY `id` ASC LIMIT 1 "
                . "FOR UPDATE",
                ['pending', $now]
            )->fetch(PDO::FETCH_ASSOC);

            if (!$job) {
                $this->db->commit();
                return null;
            }

            $this->execute(
                "UPDATE `{$this->table}` SET `status` = ?, `locked_by` = ?, "
                . "`locked_until` = ?, `updated_at` = ?, "
                . "`attempts` = `attempts` + 1 WHERE `id` = ?",
                [
                    'processing',
                    $workerId,
                    date('Y-m-d H:i:s', time()
                        + ((int) $this->config['lock_minutes'] * 60)),
                    $now,
                    $job['id'],
                ]
            );
            $this->db->commit();

            return $job;
        } catch (Throwable $e) {
            $this->db->rollBack();
            throw $e;
        }
    }

    public function handle(array $job): void
    {
        $payload = json_decode($job['payload'] ?: '{}', true, 512,
            JSON_THROW_ON_ERROR);

        if ($job['type'] === 'work') {
            // The benchmark's no-op type, like jobrun's handler = noop.
            return;
        }

        throw new RuntimeException('Unknown job type: ' . $job['type']);
    }

    public function markSuccess(int $jobId): void
    {
        $this->execute(
            "UPDATE `{$this->table}` SET `status` = ?, `locked_by` = ?, "
            . "`locked_until` = ?, `last_error` = ?, `finished_at` = ?, "
            . "`updated_at` = ? WHERE `id` = ?",
            ['success', null, null, null, date('Y-m-d H:i:s'),
                date('Y-m-d H:i:s'), $jobId]
        );
    }

    public function markRetryOrFailed(array $job, Throwable $e): void
    {
        $attempts = (int) $job['attempts'] + 1;
        $maxAttempts = (int) $job['max_attempts'];
        $delaySeconds = min(3600, 60 * (2 ** min($attempts, 6)));
        $status = $attempts >= $maxAttempts ? 'failed' : 'pending';
        $now = time();

        $this->execute(
            "UPDATE `{$this->table}` SET `status` = ?, `next_run_at` = ?, "
            . "`locked_by` = ?, `locked_until` = ?, `last_error` = ?, "
            . "`finished_at` = ?, `updated_at` = ? WHERE `id` = ?",
            [
                $status,
                date('Y-m-d H:i:s', $now + $delaySeconds),
                null,
                null,
                // mb_substr as the seed; php-mbstring may be absent.
                function_exists('mb_substr')
                    ? mb_substr($e->getMessage(), 0, 1000)
                    : substr($e->getMessage(), 0, 1000),
                $status === 'failed' ? date('Y-m-d H:i:s', $now) : null,
                date('Y-m-d H:i:s', $now),
                $job['id'],
            ]
        );
    }
}

/* app/controller/internal/Job.php: run(), without the HTTP request. */
function run(PollingJobService $service, array $config): array
{
    $workerId = gethostname() . ':' . getmypid() . ':'
        . bin2hex(random_bytes(4));
    $deadline = time() + (int) $config['max_seconds'];
    $limit = (int) $config['batch_size'];
    $done = 0;
    $failed = 0;

    $service->recoverExpired();

    while (time() < $deadline && $done < $limit) {
        $job = $service->claim($workerId);

        if (!$job) {
            break;
        }
        if (getenv('BENCH_CLAIMS')) {
            /* test 39 counts every program's claims of each job */
            file_put_contents(getenv('BENCH_CLAIMS'), $job['id'] . "\n",
                FILE_APPEND | LOCK_EX);
        }

        try {
            $service->handle($job);
            $service->markSuccess((int) $job['id']);
        } catch (Throwable $e) {
            $failed++;
            $service->markRetryOrFailed($job, $e);
        }

        $done++;
    }

    return ['ok' => true, 'done' => $done, 'failed' => $failed];
}

$socket = getenv('BENCH_SOCKET');
$dbname = getenv('BENCH_DB');
if ($socket === false || $dbname === false) {
    fwrite(STDERR, "seed-loop.php: set BENCH_SOCKET and BENCH_DB\n");
    exit(64);
}
$table = getenv('BENCH_TABLE') ?: 'polling_jobs';

$pdo = new PDO(
    "mysql:unix_socket=$socket;dbname=$dbname;charset=utf8mb4",
    'root',
    '',
    [
        PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION,
        PDO::ATTR_EMULATE_PREPARES => false,
        PDO::ATTR_STRINGIFY_FETCHES => false,
    ]
);

echo json_encode(run(new PollingJobService($pdo, $config, $table), $config)),
    "\n";
