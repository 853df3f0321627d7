/*
 * trivial.c - does nothing.  Built plain and linked (--no-as-needed)
 * against jobrun's libraries with and without libcurl, it times what
 * loading those libraries costs before jobrun's main runs.
 */
int
main(void)
{
	return 0;
}
